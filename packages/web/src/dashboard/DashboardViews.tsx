import { match, useLocation } from "../router.tsx";
import { Empty } from "../ui/Notice.tsx";
import { useFocusOnChange } from "../ui/useFocusOnChange.ts";
import { Apps } from "./Apps.tsx";
import { AppView } from "./AppView.tsx";
import { AttemptsAcross } from "./AttemptsAcross.tsx";
import { AuditLog } from "./AuditLog.tsx";
import { EventsAcross } from "./EventsAcross.tsx";
import { EditEventType, NewEventType } from "./EventTypeForm.tsx";
import { EventTypes } from "./EventTypes.tsx";
import { Overview } from "./Overview.tsx";

/** Every dashboard view, by path. An app's views (the portal's, for that app) live under /dashboard/apps/<app>. */
export function DashboardViews() {
  const { path } = useLocation();
  const rest = path.replace(/\/+$/, "") || "/dashboard";
  // Within an app (its first four parts), its portal views move focus for their own moves.
  useFocusOnChange(rest.split("/").slice(0, 4).join("/"));

  if (rest === "/dashboard") return <Overview />;
  if (rest === "/dashboard/apps") return <Apps />;
  // The raw segment: the portal views slice their paths by this base exactly as the address has it.
  const app = /^\/dashboard\/apps\/([^/]+)/.exec(path);
  if (app?.[1]) return <AppView key={app[1]} segment={app[1]} />;
  if (rest === "/dashboard/event-types") return <EventTypes />;
  if (rest === "/dashboard/event-types/new") return <NewEventType />;
  const type = match("/dashboard/event-types/:name", rest)?.name;
  if (type) return <EditEventType key={type} name={type} />;
  if (rest === "/dashboard/events") return <EventsAcross />;
  if (rest === "/dashboard/attempts") return <AttemptsAcross />;
  if (rest === "/dashboard/audit-log") return <AuditLog />;
  return <Empty title="Not found">There is nothing at this address.</Empty>;
}
