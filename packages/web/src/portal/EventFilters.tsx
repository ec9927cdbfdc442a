import { DELIVERY_STATUSES, type Endpoint } from "../types.ts";
import { Field } from "../ui/Field.tsx";
import { endpointLabel, useEventTypes } from "./data.ts";

type Values = { status: string; endpoint: string; type: string };

/** Filters by delivery status, endpoint and event type; they live in the URL, so they survive reloads. */
export function EventFilters({
  values,
  endpoints,
  onChange,
}: {
  values: Values;
  endpoints: Endpoint[];
  onChange: (changes: Partial<Values>) => void;
}) {
  const types = useEventTypes();
  const typeNames = types.data?.map((t) => t.name) ?? [];
  if (values.type && !typeNames.includes(values.type)) typeNames.push(values.type);
  const known = endpoints.some((e) => e.id === values.endpoint);
  const any = Boolean(values.status || values.endpoint || values.type);
  return (
    <form className="filters" aria-label="Filter events" onSubmit={(e) => e.preventDefault()}>
      <Field label="Delivery status">
        {(props) => (
          <select {...props} value={values.status} onChange={(e) => onChange({ status: e.target.value })}>
            <option value="">Any status</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Endpoint">
        {(props) => (
          <select {...props} value={values.endpoint} onChange={(e) => onChange({ endpoint: e.target.value })}>
            <option value="">Any endpoint</option>
            {endpoints.map((e) => (
              <option key={e.id} value={e.id}>
                {endpointLabel(e, e.id)}
              </option>
            ))}
            {values.endpoint && !known ? <option value={values.endpoint}>{values.endpoint}</option> : null}
          </select>
        )}
      </Field>
      <Field label="Event type">
        {(props) => (
          <select {...props} value={values.type} onChange={(e) => onChange({ type: e.target.value })}>
            <option value="">Any type</option>
            {typeNames.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        )}
      </Field>
      {any ? (
        <button
          type="button"
          className="button-secondary"
          onClick={() => onChange({ status: "", endpoint: "", type: "" })}
        >
          Clear filters
        </button>
      ) : null}
    </form>
  );
}
