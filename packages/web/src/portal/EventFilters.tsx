import { DELIVERY_STATUSES } from "@herald/contracts/statuses";
import type { Endpoint } from "@herald/sdk/types";
import type { ReactNode } from "react";
import { FilterSelect, plainOptions } from "../ui/FilterSelect.tsx";
import { useEventTypes } from "../ui/useEventTypes.ts";
import { endpointLabel } from "./data.ts";

export type EventFilterValues = { status: string; endpoint: string; type: string };

export const eventFiltersFrom = (query: URLSearchParams): EventFilterValues => ({
  status: query.get("status") ?? "",
  endpoint: query.get("endpoint") ?? "",
  type: query.get("type") ?? "",
});

export const NO_EVENT_FILTERS: EventFilterValues = { status: "", endpoint: "", type: "" };

/**
 * Filters by delivery status, endpoint and event type; they live in the URL, so they survive
 * reloads. The dashboard puts its app filter first (`children`) and offers archived types too.
 */
export function EventFilters({
  values,
  endpoints,
  onChange,
  includeArchived = false,
  children,
}: {
  values: EventFilterValues;
  /** The endpoints to offer; null while none can be (across apps, before one is chosen). */
  endpoints: Endpoint[] | null;
  onChange: (changes: Partial<EventFilterValues>) => void;
  includeArchived?: boolean;
  children?: ReactNode;
}) {
  const types = useEventTypes({ includeArchived });
  const any = Boolean(values.status || values.endpoint || values.type);
  return (
    <form className="filters" aria-label="Filter events" onSubmit={(e) => e.preventDefault()}>
      {children}
      <FilterSelect
        label="Delivery status"
        all="Any status"
        options={plainOptions(DELIVERY_STATUSES)}
        value={values.status}
        onChange={(status) => onChange({ status })}
      />
      <EndpointFilter
        endpoints={endpoints}
        value={values.endpoint}
        onChange={(endpoint) => onChange({ endpoint })}
      />
      <FilterSelect
        label="Event type"
        all="Any type"
        options={plainOptions(types.data?.map((t) => t.name) ?? [])}
        value={values.type}
        onChange={(type) => onChange({ type })}
      />
      {any ? (
        <button type="button" className="button-secondary" onClick={() => onChange(NO_EVENT_FILTERS)}>
          Clear filters
        </button>
      ) : null}
    </form>
  );
}

/** One app's endpoints by name; across apps, it waits for an app to be chosen (endpoints belong to one). */
export function EndpointFilter({
  endpoints,
  value,
  onChange,
}: {
  endpoints: Endpoint[] | null;
  value: string;
  onChange: (endpoint: string) => void;
}) {
  const waiting = !endpoints && !value;
  return (
    <FilterSelect
      label="Endpoint"
      all={waiting ? "Choose an app first" : "Any endpoint"}
      disabled={waiting}
      options={(endpoints ?? []).map((e) => ({ value: e.id, label: endpointLabel(e, e.id) }))}
      value={value}
      onChange={onChange}
    />
  );
}
