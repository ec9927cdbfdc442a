import type { TransformationTest } from "@herald/sdk/types";
import { type ReactNode, useId, useState } from "react";
import { api } from "../api.ts";
import { useAction } from "../ui/hooks.ts";
import { BodyBlock, JsonBlock } from "../ui/Json.tsx";
import { useEventTypes } from "../ui/useEventTypes.ts";

/**
 * The transformation's "Try it" panel: runs the code in the box on an event (a type's example,
 * or data pasted here) on the gateway, which runs it as a delivery would, and shows the request
 * it would make, that it cancels, or where it fails. Nothing is saved or sent.
 */

/** Whom the run is for: the saved endpoint (its URL and headers), or the one the create form makes. */
export type TryTarget =
  | { kind: "saved"; id: string }
  | { kind: "new"; app: string; url: string; headers?: Record<string, string> | undefined };

/** A run's answer, with the code it ran: the editor marks a failing line only while it is that code. */
export type TryResult = { code: string; test: TransformationTest };

type EventChoice = { event_type: string } | { event: { type: string; data: Record<string, unknown> } };

function runOn(target: TryTarget, code: string, event: EventChoice): Promise<TransformationTest> {
  const body = { transformation: code, ...event };
  return target.kind === "saved"
    ? api.post(`/v3/endpoints/${encodeURIComponent(target.id)}/transformation/test`, body)
    : api.post("/v3/endpoints/transformation/test", {
        app: target.app,
        url: target.url,
        ...(target.headers ? { headers: target.headers } : {}),
        ...body,
      });
}

/** Pasted event data: a JSON object, or why it is not one. */
function parseData(text: string): { data: Record<string, unknown> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `The event data is not JSON: ${(err as Error).message}` };
  }
  return value && typeof value === "object" && !Array.isArray(value)
    ? { data: value as Record<string, unknown> }
    : { problem: 'The event data is a JSON object, such as {"amount": 100}.' };
}

export function TransformationTry({
  code,
  target,
  selected,
  result,
  onResult,
  onGoToLine,
}: {
  code: string;
  target: TryTarget;
  /** The event types the form has checked: the run tries one of them (any type when none). */
  selected: string[];
  result: TryResult | null;
  onResult: (result: TryResult | null) => void;
  onGoToLine: (line: number) => void;
}) {
  const id = useId();
  const catalog = useEventTypes();
  const [chosen, setChosen] = useState("");
  const [typed, setTyped] = useState("");
  const [ownData, setOwnData] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const names = selected.length ? selected : (catalog.data?.map((t) => t.name) ?? []);
  const type = names.length ? (names.includes(chosen) ? chosen : (names[0] as string)) : typed.trim();
  const example = catalog.data?.find((t) => t.name === type)?.example ?? null;
  const run = useAction(async (choice: EventChoice) => {
    const test = await runOn(target, code, choice);
    onResult({ code, test });
  });

  const start = () => {
    setProblem(null);
    onResult(null);
    // No catalog type to take an example from: the run needs the data given here.
    const data = ownData ?? (names.length ? null : "{}");
    if (data === null) return void run.run({ event_type: type });
    const parsed = parseData(data);
    if ("problem" in parsed) return setProblem(parsed.problem);
    void run.run({ event: { type, data: parsed.data } });
  };
  const blank = !code.trim();
  return (
    <fieldset className="transformation-try">
      <legend>Try it</legend>
      {names.length ? (
        <div className="field">
          <label htmlFor={`${id}-type`}>Event type to try</label>
          <select id={`${id}-type`} value={type} onChange={(e) => setChosen(e.target.value)}>
            {names.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </div>
      ) : catalog.data || catalog.error ? (
        <div className="field">
          <label htmlFor={`${id}-type`}>Event type to try</label>
          <input
            id={`${id}-type`}
            className="mono"
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
          />
        </div>
      ) : null}
      <label className="checkbox-row">
        <input
          type="checkbox"
          checked={ownData !== null}
          onChange={(e) => setOwnData(e.target.checked ? JSON.stringify(example ?? {}, null, 2) : null)}
        />
        Use event data of my own
      </label>
      {ownData !== null ? (
        <div className={`field${problem ? " field-invalid" : ""}`}>
          <label htmlFor={`${id}-data`}>Event data (JSON)</label>
          <textarea
            id={`${id}-data`}
            className="transformation-data"
            rows={6}
            spellCheck={false}
            value={ownData}
            aria-invalid={problem ? true : undefined}
            onChange={(e) => setOwnData(e.target.value)}
          />
        </div>
      ) : (
        <p className="hint">
          {type && example === null && catalog.data
            ? `${type} has no example payload: it is tried with {} as its data.`
            : "The event is the type's example payload, as the catalog shows it."}
        </p>
      )}
      <div className="actions">
        <button
          type="button"
          className="button-secondary"
          onClick={start}
          disabled={run.busy || blank || !type}
        >
          {run.busy ? "Running…" : "Run"}
        </button>
        {blank ? <span className="hint">Write a transformation to try it.</span> : null}
      </div>
      <div role="status" className="transformation-verdict">
        {verdict({ problem, failed: run.error?.message ?? null, result, code, onGoToLine })}
      </div>
      {result?.test.request ? <SentRequest request={result.test.request} /> : null}
      {result ? (
        <details className="filter-example">
          <summary>What handler received</summary>
          <JsonBlock value={result.test.input} label="The webhook object handler received" />
        </details>
      ) : null}
    </fieldset>
  );
}

/** The outcome in a sentence, for the live region: the request itself is shown below it. */
function verdict({
  problem,
  failed,
  result,
  code,
  onGoToLine,
}: {
  problem: string | null;
  failed: string | null;
  result: TryResult | null;
  code: string;
  onGoToLine: (line: number) => void;
}): ReactNode {
  if (problem) return <p className="field-error">{problem}</p>;
  if (failed) return <p className="field-error">Could not run: {failed}</p>;
  if (!result) return null;
  const stale = result.code !== code ? <p className="hint">The code has changed since this run.</p> : null;
  const { test } = result;
  if (test.error)
    return (
      <>
        <p className="field-error">{test.error.message}</p>
        {test.error.line !== null ? (
          <p>
            <button type="button" className="button-link" onClick={() => onGoToLine(test.error!.line!)}>
              Go to line {test.error.line}
            </button>
          </p>
        ) : null}
        {stale}
      </>
    );
  if (test.cancelled)
    return (
      <>
        <p className="try-verdict try-verdict-cancelled">Cancelled: this event would not be delivered.</p>
        {stale}
      </>
    );
  return (
    <>
      <p className="try-verdict">This request would be sent:</p>
      {stale}
    </>
  );
}

function SentRequest({ request }: { request: NonNullable<TransformationTest["request"]> }) {
  const headers = Object.entries(request.headers);
  return (
    <div className="transformation-request">
      <p className="mono">
        {request.method} {request.url}
      </p>
      <h3>Headers</h3>
      {headers.length ? (
        <ul className="plain-list">
          {headers.map(([name, value]) => (
            <li key={name} className="mono">
              {name}: {value}
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">None besides Herald's own (content type, signature, id, timestamp).</p>
      )}
      <h3>Body</h3>
      <BodyBlock body={request.body} label="The body that would be sent" />
    </div>
  );
}
