import { type Ref, useEffect, useId, useImperativeHandle, useRef } from "react";

export type HeaderRow = { key: number; name: string; value: string };

let nextKey = 1;
export const headerRow = (name = "", value = ""): HeaderRow => ({ key: nextKey++, name, value });

export function rowsFromHeaders(headers: Record<string, string>): HeaderRow[] {
  return Object.entries(headers).map(([name, value]) => headerRow(name, value));
}

/** The rows as the API takes them; rows left entirely empty are ignored. */
export function headersFromRows(rows: HeaderRow[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const row of rows) if (row.name.trim()) out[row.name.trim()] = row.value;
  return out;
}

/** A row the form should not send: a value without a name, or a name given twice. */
export function headerRowProblem(rows: HeaderRow[], row: HeaderRow): string | null {
  const name = row.name.trim().toLowerCase();
  if (!name) return row.value ? "Give this header a name, or remove the row." : null;
  const first = rows.find((r) => r.name.trim().toLowerCase() === name);
  return first && first.key !== row.key ? "This header is already set above." : null;
}

/** What a form can ask of the editor: focus the first row it would not send. */
export type HeadersEditorHandle = { focusFirstProblem: () => boolean };

/**
 * Custom headers as key/value rows, each removable; errors show at the row they are about.
 * Adding a row focuses its name; removing one focuses the next row's name (or the previous
 * one's, or the Add button), so keyboard focus never falls back to the page.
 */
export function HeadersEditor({
  rows,
  onChange,
  error,
  errorFor,
  ref,
}: {
  rows: HeaderRow[];
  onChange: (rows: HeaderRow[]) => void;
  /** An error about the headers as a whole. */
  error?: string | null;
  /** An error about one header, by its name. */
  errorFor: (name: string) => string | null;
  ref?: Ref<HeadersEditorHandle>;
}) {
  const id = useId();
  const addButton = useRef<HTMLButtonElement>(null);
  /** Where focus goes once the rows have re-rendered: a row's name field, or the Add button. */
  const focusNext = useRef<number | "add" | null>(null);
  const nameField = (key: number) => document.getElementById(`${id}-${key}-name`);
  useEffect(() => {
    const target = focusNext.current;
    if (target === null) return;
    focusNext.current = null;
    (target === "add" ? addButton.current : nameField(target))?.focus();
  });
  useImperativeHandle(ref, () => ({
    focusFirstProblem() {
      const row = rows.find((r) => headerRowProblem(rows, r));
      if (row) nameField(row.key)?.focus();
      return Boolean(row);
    },
  }));
  const update = (key: number, change: Partial<HeaderRow>) =>
    onChange(rows.map((r) => (r.key === key ? { ...r, ...change } : r)));
  const add = () => {
    const row = headerRow();
    focusNext.current = row.key;
    onChange([...rows, row]);
  };
  const remove = (index: number) => {
    const neighbour = rows[index + 1] ?? rows[index - 1];
    focusNext.current = neighbour ? neighbour.key : "add";
    onChange(rows.filter((_, i) => i !== index));
  };
  return (
    <fieldset
      className={`field headers-editor${error ? " field-invalid" : ""}`}
      aria-describedby={`${id}-hint`}
    >
      <legend>Custom headers</legend>
      <p id={`${id}-hint`} className="hint">
        Sent with every request to this endpoint, for example an authorization token of your own. Once saved,
        values are hidden: one left as <code>[redacted]</code> keeps what was saved.
      </p>
      {rows.length ? (
        <ul className="header-rows">
          {rows.map((row, i) => {
            const problem = headerRowProblem(rows, row) ?? errorFor(row.name.trim());
            const errorId = `${id}-${row.key}-error`;
            return (
              <li key={row.key} className={`header-row${problem ? " field-invalid" : ""}`}>
                <label className="visually-hidden" htmlFor={`${id}-${row.key}-name`}>
                  Header {i + 1} name
                </label>
                <input
                  id={`${id}-${row.key}-name`}
                  placeholder="X-Header-Name"
                  autoComplete="off"
                  spellCheck={false}
                  value={row.name}
                  aria-invalid={problem ? true : undefined}
                  aria-describedby={problem ? errorId : undefined}
                  onChange={(e) => update(row.key, { name: e.target.value })}
                />
                <label className="visually-hidden" htmlFor={`${id}-${row.key}-value`}>
                  Header {i + 1} value
                </label>
                <input
                  id={`${id}-${row.key}-value`}
                  placeholder="value"
                  autoComplete="off"
                  spellCheck={false}
                  value={row.value}
                  onChange={(e) => update(row.key, { value: e.target.value })}
                />
                <button
                  type="button"
                  className="button-secondary"
                  aria-label={`Remove header ${i + 1}${row.name ? ` (${row.name})` : ""}`}
                  onClick={() => remove(i)}
                >
                  Remove
                </button>
                {problem ? (
                  <p id={errorId} className="field-error header-row-error">
                    {problem}
                  </p>
                ) : null}
              </li>
            );
          })}
        </ul>
      ) : (
        <p className="muted">No custom headers.</p>
      )}
      {error ? <p className="field-error">{error}</p> : null}
      <div>
        <button ref={addButton} type="button" className="button-secondary" onClick={add}>
          Add header
        </button>
      </div>
    </fieldset>
  );
}
