import { type CompiledFilter, compileFilter, endpointTakes, FilterError } from "@herald/contracts/filter";
import { type ReactNode, type RefObject, useId, useState } from "react";
import { describeSyntaxError, syntaxError } from "../dashboard/schemaText.ts";
import { JsonBlock } from "../ui/Json.tsx";
import { useEventTypes } from "../ui/useEventTypes.ts";

/**
 * The endpoint's filter as JSON text (empty: none), with a preview: whether a type's example
 * payload would pass it, matched here by the code the dispatcher runs (@herald/contracts/filter).
 */

/** The filter as the form holds it: pretty-printed, or empty for none. */
export const filterText = (filter: Record<string, unknown> | null | undefined): string =>
  filter ? JSON.stringify(filter, null, 2) : "";

/** What the box holds: nothing (no filter), JSON, or text that is not JSON (where it goes wrong). */
export type ParsedFilter =
  | { kind: "empty" }
  | { kind: "json"; value: unknown }
  | { kind: "error"; message: string };

export function parseFilterText(text: string): ParsedFilter {
  if (!text.trim()) return { kind: "empty" };
  try {
    return { kind: "json", value: JSON.parse(text) };
  } catch (err) {
    return { kind: "error", message: describeSyntaxError(syntaxError(text, (err as Error).message)) };
  }
}

/** The body's `filter`: always sent, so emptying the box removes the filter (null). */
export const filterBody = (parsed: ParsedFilter): unknown => (parsed.kind === "json" ? parsed.value : null);

/** Whether an API error's `param` names the filter or a part of it (`filter["data.amount"].$gte`). */
export const isFilterParam = (param: string): boolean => /^filter($|[.[])/.test(param);

/** A problem at the field: the message, and the part of the filter at fault when the API named one. */
export type FilterProblem = { message: string; param?: string | undefined };

/** The box read as a filter: none, compiled, not JSON, or refused by the compiler (where, and why). */
type Checked =
  | { kind: "none" }
  | { kind: "ok"; filter: CompiledFilter }
  | { kind: "syntax"; message: string }
  | { kind: "invalid"; message: string; param: string };

function check(parsed: ParsedFilter): Checked {
  if (parsed.kind === "empty") return { kind: "none" };
  if (parsed.kind === "error") return { kind: "syntax", message: parsed.message };
  try {
    return { kind: "ok", filter: compileFilter(parsed.value) };
  } catch (err) {
    return err instanceof FilterError
      ? { kind: "invalid", message: err.message, param: err.param }
      : { kind: "invalid", message: String(err), param: "filter" };
  }
}

export function FilterField({
  value,
  onChange,
  eventTypes,
  appId,
  error,
  inputRef,
}: {
  value: string;
  onChange: (text: string) => void;
  /** The event types the form has checked: the preview tries one of them (any type when none). */
  eventTypes: string[];
  appId: string;
  error: FilterProblem | null;
  inputRef: RefObject<HTMLTextAreaElement | null>;
}) {
  const id = useId();
  const checked = check(parseFilterText(value));
  const invalid = error !== null || checked.kind === "syntax" || checked.kind === "invalid";
  return (
    <div className={`field filter-field${invalid ? " field-invalid" : ""}`}>
      <label htmlFor={id}>Filter</label>
      <div className="filter-layout">
        <div className="filter-box">
          <textarea
            id={id}
            ref={inputRef}
            className="filter-input"
            rows={8}
            spellCheck={false}
            autoCapitalize="off"
            autoComplete="off"
            placeholder={'{ "data.amount": { "$gte": 100 } }'}
            value={value}
            aria-invalid={invalid ? true : undefined}
            aria-describedby={`${id}-hint${error ? ` ${id}-error` : ""}`}
            onChange={(e) => onChange(e.target.value)}
          />
          <p id={`${id}-hint`} className="hint">
            Optional: a MongoDB-style query, as JSON; only the events it matches are sent here. Keys are paths
            into the event's <code>id</code>, <code>type</code>, <code>app</code> and <code>data</code> (
            <code>data.amount</code>); operators are <code>$eq</code>, <code>$ne</code>, <code>$in</code>,{" "}
            <code>$nin</code>, <code>$gt</code>, <code>$gte</code>, <code>$lt</code>, <code>$lte</code>,{" "}
            <code>$exists</code>, <code>$not</code>, <code>$and</code> and <code>$or</code>. Leave it empty
            for every event of the types checked.
          </p>
          {error ? (
            <p id={`${id}-error`} className="field-error">
              {error.message}
              {error.param ? <span className="mono"> ({error.param})</span> : null}
            </p>
          ) : null}
        </div>
        <FilterPreview checked={checked} selected={eventTypes} appId={appId} />
      </div>
    </div>
  );
}

/** Whether the example payload of a type the endpoint takes would pass the filter as typed. */
function FilterPreview({
  checked,
  selected,
  appId,
}: {
  checked: Checked;
  selected: string[];
  appId: string;
}) {
  const selectId = useId();
  const catalog = useEventTypes();
  const [chosen, setChosen] = useState("");
  const names = selected.length ? selected : (catalog.data?.map((t) => t.name) ?? []);
  const type = names.includes(chosen) ? chosen : names[0];
  const eventType = type ? catalog.data?.find((t) => t.name === type) : undefined;
  // The event as the dispatcher matches it: `{ id, type, app, data }`, the type's example as `data`.
  const example = eventType?.example ?? null;
  const event = type && example !== null ? { id: "evt_preview", type, app: appId, data: example } : null;
  const outcome = (): ReactNode => {
    if (checked.kind === "syntax") return <p className="field-error">Not JSON yet: {checked.message}</p>;
    if (checked.kind === "invalid")
      return (
        <p className="field-error">
          Not a valid filter: {checked.message} <span className="mono">({checked.param})</span>
        </p>
      );
    if (!catalog.data)
      return catalog.error ? (
        <p className="hint">The event catalog could not be loaded: {catalog.error.message}</p>
      ) : (
        <p className="hint">Loading the event catalog…</p>
      );
    if (!type) return <p className="hint">There are no event types to try the filter on yet.</p>;
    if (!event)
      return (
        <p className="hint">
          <span className="mono">{type}</span> has no example payload (
          {eventType ? "its type has no schema" : "it is not in the catalog"}): nothing to try the filter on.
        </p>
      );
    const takes = endpointTakes(selected, checked.kind === "ok" ? checked.filter : null, event);
    return takes === "yes" ? (
      <p className="filter-verdict filter-verdict-yes">
        {checked.kind === "none" ? "No filter: this endpoint" : "This endpoint"} would receive the example{" "}
        <span className="mono">{type}</span> event.
      </p>
    ) : (
      <p className="filter-verdict filter-verdict-no">
        This endpoint would not receive the example <span className="mono">{type}</span> event:{" "}
        {takes === "filter" ? "the filter does not match it." : "its event types leave this type out."}
      </p>
    );
  };
  return (
    <fieldset className="filter-preview">
      <legend>Preview</legend>
      {names.length > 0 ? (
        <div className="field">
          <label htmlFor={selectId}>Event type to try</label>
          <select id={selectId} value={type} onChange={(e) => setChosen(e.target.value)}>
            {names.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </div>
      ) : null}
      <div role="status" className="filter-preview-result">
        {outcome()}
      </div>
      {event ? (
        <details className="filter-example">
          <summary>The event tried</summary>
          <JsonBlock value={event} label={`The example ${type} event the filter is tried on`} />
        </details>
      ) : null}
    </fieldset>
  );
}
