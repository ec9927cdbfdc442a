import { useId } from "react";
import { ErrorNotice, Loading } from "../ui/Notice.tsx";
import { useEventTypes } from "../ui/useEventTypes.ts";

/** The event type filter, chosen from the catalog: none checked means every type. */
export function EventTypePicker({
  selected,
  onChange,
  error,
}: {
  selected: string[];
  onChange: (names: string[]) => void;
  error?: string | null;
}) {
  const id = useId();
  const types = useEventTypes();
  const toggle = (name: string, on: boolean) =>
    onChange(on ? [...selected, name] : selected.filter((n) => n !== name));
  // Names the endpoint receives that are no longer in the catalog (archived) stay choosable.
  const known = new Set(types.data?.map((t) => t.name));
  const extra = selected.filter((n) => types.data && !known.has(n));
  return (
    <fieldset
      className={`field${error ? " field-invalid" : ""}`}
      aria-describedby={`${id}-hint${error ? ` ${id}-error` : ""}`}
    >
      <legend>Event types</legend>
      <p id={`${id}-hint`} className="hint">
        {selected.length
          ? `Receives only the ${selected.length === 1 ? "type" : `${selected.length} types`} checked.`
          : "None checked: this endpoint receives every event type."}
      </p>
      {types.error ? <ErrorNotice error={types.error} onRetry={types.reload} /> : null}
      {!types.data ? (
        types.error ? null : (
          <Loading label="Loading the event catalog…" />
        )
      ) : types.data.length + extra.length === 0 ? (
        <p className="muted">There are no event types yet; this endpoint will receive every type.</p>
      ) : (
        <div className="type-picker">
          {[
            ...types.data.map((t) => ({ name: t.name, description: t.description })),
            ...extra.map((name) => ({ name, description: "archived" })),
          ].map((t) => (
            <label key={t.name} className="type-option">
              <input
                type="checkbox"
                checked={selected.includes(t.name)}
                onChange={(e) => toggle(t.name, e.target.checked)}
              />
              <span className="mono">{t.name}</span>
              {t.description ? <span className="muted type-option-description">{t.description}</span> : null}
            </label>
          ))}
        </div>
      )}
      {error ? (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
