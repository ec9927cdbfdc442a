import type { Endpoint } from "@herald/sdk/types";
import { type Ref, useEffect, useId, useImperativeHandle, useRef, useState } from "react";
import { TransformationTry, type TryResult, type TryTarget } from "./TransformationTry.tsx";
import {
  byteLength,
  isBlank,
  lineInMessage,
  lineNumbers,
  lineRange,
  MAX_TRANSFORMATION_BYTES,
  STARTER_TRANSFORMATION,
  transformationBody,
} from "./transformationText.ts";

/**
 * The endpoint's transformation: JavaScript in a plain monospace box with its line numbers
 * beside it (no editor library: the bundle stays small), a starter to begin from, a way to
 * remove it, and the "Try it" panel. A failing line, from a run or from the API's refusal on
 * save, is marked in the numbers and the caret is put on it.
 */

export type TransformationHandle = {
  /** Focus the box, on `line` when there is one (the API's refusal names it). */
  focusLine: (line: number | null) => void;
};

/**
 * The endpoint form's wiring of its transformation: the field's props but the API's error,
 * what a save sends of it, and focus on the line a refusal names. The form keeps the code with
 * its other values.
 */
export function useTransformationField({
  id,
  appId,
  url,
  headers,
  value,
  onChange,
  saved,
  eventTypes,
}: {
  /** The endpoint being edited; absent for a new one. */
  id: string | undefined;
  appId: string;
  /** The endpoint's URL as the form would save it. */
  url: string;
  /** A webhook's custom headers as typed; a destination has none. */
  headers: Record<string, string> | undefined;
  value: string;
  onChange: (text: string) => void;
  saved: Endpoint | null;
  eventTypes: string[];
}) {
  const handleRef = useRef<TransformationHandle>(null);
  // An edit is tried as the saved endpoint (its header values are write-only); a new one as typed.
  const target: TryTarget = id ? { kind: "saved", id } : { kind: "new", app: appId, url, headers };
  return {
    field: { value, onChange, saved: saved?.transformation ?? null, target, eventTypes, handleRef },
    /** The save's `transformation`: nothing when the code is as saved. */
    body: transformationBody(value, saved),
    /** Puts the caret on the line the API's refusal (`message`) names, or in the box. */
    focusError: (message: string) => handleRef.current?.focusLine(lineInMessage(message)),
  };
}

export function TransformationField({
  value,
  onChange,
  saved,
  target,
  eventTypes,
  error,
  handleRef,
}: {
  value: string;
  onChange: (text: string) => void;
  /** The endpoint's saved transformation (null: none, or a new endpoint). */
  saved: string | null;
  target: TryTarget;
  eventTypes: string[];
  /** The API's message at `transformation`, from the last save. */
  error: string | null;
  handleRef: Ref<TransformationHandle>;
}) {
  const id = useId();
  const boxRef = useRef<HTMLTextAreaElement>(null);
  const gutterRef = useRef<HTMLDivElement>(null);
  const [tried, setTried] = useState<TryResult | null>(null);
  /** The code as it was when the API refused it: its line is marked only while the code is that. */
  const [refused, setRefused] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new refusal is what marks the code.
  useEffect(() => setRefused(error ? value : null), [error]);

  const showLine = (line: number, focus: boolean) => {
    const box = boxRef.current;
    if (!box) return;
    if (focus) box.focus();
    const { start, end } = lineRange(box.value, line);
    box.setSelectionRange(start, end);
    // Two lines of context above it; the numbers follow the box's scroll.
    const lineHeight = Number.parseFloat(getComputedStyle(box).lineHeight) || 20;
    box.scrollTop = Math.max(0, (line - 3) * lineHeight);
    syncGutter();
  };
  const syncGutter = () => {
    if (gutterRef.current && boxRef.current) gutterRef.current.scrollTop = boxRef.current.scrollTop;
  };
  useImperativeHandle(handleRef, () => ({
    focusLine: (line) => (line === null ? boxRef.current?.focus() : showLine(line, true)),
  }));

  const triedLine = tried && tried.code === value ? (tried.test.error?.line ?? null) : null;
  const refusedLine = error && refused === value ? lineInMessage(error) : null;
  const marked = refusedLine ?? triedLine;
  const onResult = (result: TryResult | null) => {
    setTried(result);
    // The caret goes to the failing line; focus stays on Run, where the answer is read out.
    const line = result?.test.error?.line;
    if (line && result.code === boxRef.current?.value) showLine(line, false);
  };
  const bytes = byteLength(value);
  const tooLong = bytes > MAX_TRANSFORMATION_BYTES;
  const invalid = Boolean(error) || tooLong;
  const described = [`${id}-hint`, error ? `${id}-error` : null, tooLong ? `${id}-size` : null];
  return (
    <div className={`field transformation-field${invalid ? " field-invalid" : ""}`}>
      <label htmlFor={id}>Transformation</label>
      <p id={`${id}-hint`} className="hint">
        Optional: JavaScript defining <code>function handler(webhook)</code>, which reshapes each delivery
        before it is signed and sent: its <code>payload</code>, <code>headers</code>, <code>method</code> or{" "}
        <code>url</code>, or <code>cancel = true</code> to send nothing. Whoever can see this endpoint can
        read the code: put no secret in it (keep tokens in custom headers and read them from{" "}
        <code>webhook.headers</code>).
      </p>
      <div className="code-editor">
        <div className="code-gutter" ref={gutterRef} aria-hidden="true">
          {lineNumbers(value).map((n) => (
            <span key={n} className={n === marked ? "code-gutter-marked" : undefined}>
              {n}
            </span>
          ))}
        </div>
        <textarea
          id={id}
          ref={boxRef}
          className="code-input"
          rows={12}
          wrap="off"
          spellCheck={false}
          autoCapitalize="off"
          autoComplete="off"
          placeholder="function handler(webhook) { … return webhook; }"
          value={value}
          aria-invalid={invalid ? true : undefined}
          aria-describedby={described.filter(Boolean).join(" ")}
          onChange={(e) => onChange(e.target.value)}
          onScroll={syncGutter}
        />
      </div>
      <div className="actions transformation-actions">
        {isBlank(value) ? (
          <button type="button" className="button-secondary" onClick={() => onChange(STARTER_TRANSFORMATION)}>
            Start from an example
          </button>
        ) : (
          <button type="button" className="button-secondary" onClick={() => onChange("")}>
            Remove transformation
          </button>
        )}
        {isBlank(value) && saved !== null ? (
          <>
            <span className="hint">Saving removes this endpoint's transformation.</span>
            <button type="button" className="button-link" onClick={() => onChange(saved)}>
              Keep it
            </button>
          </>
        ) : null}
      </div>
      {tooLong ? (
        <p id={`${id}-size`} className="field-error">
          {`${bytes.toLocaleString("en")} bytes: a transformation has at most ${MAX_TRANSFORMATION_BYTES.toLocaleString("en")} (UTF-8).`}
        </p>
      ) : null}
      {error ? (
        <p id={`${id}-error`} className="field-error">
          {error}
          {refusedLine ? (
            <>
              {" "}
              <button type="button" className="button-link" onClick={() => showLine(refusedLine, true)}>
                Go to line {refusedLine}
              </button>
            </>
          ) : null}
        </p>
      ) : null}
      <TransformationTry
        code={value}
        target={target}
        selected={eventTypes}
        result={tried}
        onResult={onResult}
        onGoToLine={(line) => showLine(line, true)}
      />
    </div>
  );
}
