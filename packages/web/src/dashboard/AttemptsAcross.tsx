import { ATTEMPT_STATUSES } from "@herald/contracts/statuses";
import { AttemptsList } from "../portal/AttemptsTable.tsx";
import { useAppEndpoints } from "../portal/data.ts";
import { EndpointFilter } from "../portal/EventFilters.tsx";
import { Link, setQuery, useLocation } from "../router.tsx";
import { FilterSelect, plainOptions } from "../ui/FilterSelect.tsx";
import { PageHeader } from "../ui/Layout.tsx";
import { POLL_MS } from "../ui/poll.ts";
import { appBase } from "./AppView.tsx";
import { AppFilter } from "./Filters.tsx";
import { appLabel, useApps } from "./model.ts";

/** Delivery attempts across every app (the portal's attempts table, with filters), newest first. */
export function AttemptsAcross() {
  const { query } = useLocation();
  const filter = {
    app: query.get("app") ?? "",
    status: query.get("status") ?? "",
    endpoint: query.get("endpoint") ?? "",
  };
  const apps = useApps();
  // Without an app, the account's first 100 endpoints, to name most attempts' endpoints.
  const endpoints = useAppEndpoints(filter.app);
  return (
    <>
      <PageHeader title="Attempts" />
      <form className="filters" aria-label="Filter attempts" onSubmit={(e) => e.preventDefault()}>
        <AppFilter
          apps={apps.data}
          value={filter.app}
          onChange={(app) => setQuery({ app, endpoint: undefined })}
        />
        <FilterSelect
          label="Status"
          all="Any status"
          options={plainOptions(ATTEMPT_STATUSES)}
          value={filter.status}
          onChange={(status) => setQuery({ status })}
        />
        <EndpointFilter
          endpoints={filter.app ? (endpoints.data ?? []) : null}
          value={filter.endpoint}
          onChange={(endpoint) => setQuery({ endpoint })}
        />
      </form>
      <AttemptsList
        query={filter}
        caption="Attempts"
        show="endpoint"
        endpoints={endpoints.data}
        openIn={appBase}
        pollMs={POLL_MS.acrossApps}
        filtered={Object.values(filter).some(Boolean)}
        appColumn={(id) => <Link href={appBase(id)}>{appLabel(apps.data, id)}</Link>}
      />
    </>
  );
}
