import type { SchemaValidation } from "@herald/sdk/types";
import { useEffect, useId, useRef, useState } from "react";
import { ApiError, api } from "../api.ts";
import { JsonBlock } from "../ui/Json.tsx";
import { describeSyntaxError, parseSchemaText } from "./schemaText.ts";

/** 300 ms after typing stops: quick enough to feel live, without a request per keystroke. */
const DEBOUNCE_MS = 300;

/**
 * The server's word on the schema. While a newer version is being checked, the last answer
 * stays on screen, dimmed and marked busy, rather than flickering at every keystroke.
 */
type Checked =
  | { kind: "idle" }
  | { kind: "checking" }
  | { kind: "done"; result: SchemaValidation; stale?: boolean }
  | { kind: "failed"; error: ApiError; stale?: boolean };

/**
 * A JSON Schema in a textarea, checked as it is typed: JSON syntax here at once (with where the
 * parser stopped), then by the server against the JSON Schema meta-schema, which also makes an
 * example payload from it.
 */
export function SchemaEditor({ value, onChange }: { value: string; onChange: (text: string) => void }) {
  const id = useId();
  const parsed = parseSchemaText(value);
  const checked = useServerCheck(parsed.kind === "object" ? parsed.schema : null);
  const invalid =
    parsed.kind === "error" || (checked.kind === "done" && !checked.result.valid) ? true : undefined;
  const stale = (checked.kind === "done" || checked.kind === "failed") && checked.stale;
  return (
    <div className={`field${invalid ? " field-invalid" : ""}`}>
      <label htmlFor={id}>Schema (JSON Schema)</label>
      <textarea
        id={id}
        className="schema-input"
        spellCheck={false}
        autoCapitalize="off"
        autoComplete="off"
        rows={14}
        value={value}
        aria-invalid={invalid}
        aria-describedby={`${id}-status`}
        onChange={(e) => onChange(e.target.value)}
      />
      <div
        id={`${id}-status`}
        className={`schema-status${stale ? " stale" : ""}`}
        role="status"
        aria-live="polite"
        aria-busy={stale || checked.kind === "checking" ? true : undefined}
      >
        {parsed.kind === "empty" ? (
          <p className="hint">No schema: events of this type may carry any JSON object.</p>
        ) : parsed.kind === "error" ? (
          <p className="field-error">{describeSyntaxError(parsed)}</p>
        ) : checked.kind === "checking" || checked.kind === "idle" ? (
          <p className="hint">Checking the schema…</p>
        ) : checked.kind === "failed" ? (
          <p className="field-error">Could not check the schema: {checked.error.message}</p>
        ) : checked.result.valid ? (
          <p className="field-ok">Valid JSON Schema.</p>
        ) : (
          <>
            <p className="field-error">Not a valid JSON Schema:</p>
            <ul className="field-error">
              {checked.result.errors.map((e) => (
                <li key={`${e.path}:${e.message}`}>
                  <code>{e.path || "/"}</code> {e.message}
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
      {parsed.kind === "object" && checked.kind === "done" && checked.result.valid ? (
        <div className={stale ? "stale" : undefined}>
          <h3>Example payload</h3>
          <JsonBlock value={checked.result.example} label="An example payload made from the schema" />
        </div>
      ) : null}
    </div>
  );
}

function useServerCheck(schema: Record<string, unknown> | null): Checked {
  const [checked, setChecked] = useState<Checked>({ kind: "idle" });
  const generation = useRef(0);
  const key = schema ? JSON.stringify(schema) : "";
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for the schema's content.
  useEffect(() => {
    const mine = ++generation.current;
    if (!schema) {
      setChecked({ kind: "idle" });
      return;
    }
    setChecked((c) =>
      c.kind === "done" || c.kind === "failed" ? { ...c, stale: true } : { kind: "checking" },
    );
    const timer = setTimeout(() => {
      api.post<SchemaValidation>("/v3/json-schema/validate", { schema }).then(
        (result) => mine === generation.current && setChecked({ kind: "done", result }),
        (err: unknown) =>
          mine === generation.current &&
          setChecked({
            kind: "failed",
            error:
              err instanceof ApiError ? err : new ApiError(0, { type: "api_error", message: String(err) }),
          }),
      );
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [key]);
  return checked;
}
