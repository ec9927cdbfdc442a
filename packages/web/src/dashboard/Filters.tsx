import { api, type List } from "../api.ts";
import type { Endpoint, EventType } from "../types.ts";
import { Field } from "../ui/Field.tsx";
import { useResource } from "../ui/hooks.ts";
import { useApps } from "./model.ts";

/**
 * The list filters, each a labelled select whose value lives in the URL query, so a filtered
 * view can be reloaded, shared, and returned to with Back.
 */
type FilterProps = { value: string; onChange: (value: string) => void };

function Select({
  label,
  value,
  onChange,
  options,
  all,
  disabled,
}: FilterProps & {
  label: string;
  options: { value: string; label: string }[];
  all: string;
  disabled?: boolean;
}) {
  // A value from the address that the list does not hold (an older app, a uid) stays choosable.
  const shown =
    value && !options.some((o) => o.value === value) ? [{ value, label: value }, ...options] : options;
  return (
    <Field label={label}>
      {(props) => (
        <select {...props} value={value} disabled={disabled} onChange={(e) => onChange(e.target.value)}>
          <option value="">{all}</option>
          {shown.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function AppFilter(props: FilterProps) {
  const apps = useApps();
  const options = (apps.data ?? []).map((a) => ({
    value: a.id,
    label: a.uid ? `${a.name} (${a.uid})` : a.name,
  }));
  return <Select label="App" all="All apps" options={options} {...props} />;
}

export function TypeFilter(props: FilterProps) {
  const types = useResource(
    () =>
      api
        .get<List<EventType>>("/v3/event-types", { limit: 100, include_archived: true })
        .then((l) => l.data.map((t) => t.name).sort()),
    [],
  );
  return (
    <Select
      label="Event type"
      all="All types"
      options={(types.data ?? []).map((name) => ({ value: name, label: name }))}
      {...props}
    />
  );
}

export function StatusFilter({ statuses, ...props }: FilterProps & { statuses: readonly string[] }) {
  return (
    <Select
      label="Status"
      all="Any status"
      options={statuses.map((s) => ({ value: s, label: s }))}
      {...props}
    />
  );
}

/** An app's endpoints: the list needs an app first (endpoints belong to one). */
export function EndpointFilter({ app, ...props }: FilterProps & { app: string }) {
  const endpoints = useResource(
    () =>
      app
        ? api.get<List<Endpoint>>("/v3/endpoints", { app, limit: 100 }).then((l) => l.data)
        : Promise.resolve([] as Endpoint[]),
    [app],
  );
  return (
    <Select
      label="Endpoint"
      all={app || props.value ? "All endpoints" : "Choose an app first"}
      disabled={!app && !props.value}
      options={(endpoints.data ?? []).map((e) => ({ value: e.id, label: e.description || e.url }))}
      {...props}
    />
  );
}
