import { EventsBrowser } from "../portal/EventsList.tsx";
import { Link, setQuery, useLocation } from "../router.tsx";
import { POLL_MS } from "../ui/poll.ts";
import { appBase } from "./AppView.tsx";
import { AppFilter } from "./Filters.tsx";
import { appLabel, useApps } from "./model.ts";

/** Events across every app (the portal's events list, with an app filter and column), newest first. */
export function EventsAcross() {
  const app = useLocation().query.get("app") ?? "";
  const apps = useApps();
  return (
    <EventsBrowser
      app={app}
      openIn={appBase}
      pollMs={POLL_MS.acrossApps}
      emptyHint="Events you send with POST /v3/events appear here."
      includeArchived
      appFilter={
        // An endpoint belongs to one app: choosing another app clears it.
        <AppFilter apps={apps.data} value={app} onChange={(v) => setQuery({ app: v, endpoint: undefined })} />
      }
      appColumn={(id) => <Link href={appBase(id)}>{appLabel(apps.data, id)}</Link>}
    />
  );
}
