import { madeNoRequest } from "@herald/contracts/errorKinds";
import type { AttemptWithRequest } from "@herald/sdk/types";
import { useState } from "react";
import { api } from "../api.ts";
import { useAppScope } from "../appScope.tsx";
import { Link } from "../router.tsx";
import { DestinationLabel } from "../ui/DestinationLabel.tsx";
import { isDestination } from "../ui/destinationUrl.ts";
import { errorKindMeaning } from "../ui/errorKinds.ts";
import { useResource } from "../ui/hooks.ts";
import { BodyBlock } from "../ui/Json.tsx";
import { PageHeader } from "../ui/Layout.tsx";
import { ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Status } from "../ui/Status.tsx";
import { Time } from "../ui/Time.tsx";
import { paths } from "./data.ts";

/**
 * One attempt: the request as sent and the response as received, both as text. A destination's
 * attempt (a queue, stream, topic or bucket) has no HTTP response: its `response_body` is where
 * the message went, in that type's terms ("exchange orders, routing key invoice.paid"), shown
 * as "Delivered to". An attempt whose transformation cancelled it, failed or never ran made no
 * request: it shows none (the API's `request` is null), and why.
 */
export function AttemptDetail({ id }: { id: string }) {
  const { base } = useAppScope();
  // An attempt in flight settles within the send timeout; a finished one never changes.
  const [settled, setSettled] = useState(false);
  const attempt = useResource(
    async () => {
      const found = await api.get<AttemptWithRequest>(`/v3/attempts/${encodeURIComponent(id)}`);
      if (found.status !== "pending") setSettled(true);
      return found;
    },
    [id],
    settled ? undefined : 2000,
  );
  const a = attempt.data;
  if (!a)
    return attempt.error ? (
      <ErrorNotice error={attempt.error} onRetry={attempt.reload} />
    ) : (
      <Loading label="Loading the attempt…" />
    );
  const headers = a.request?.headers ? Object.entries(a.request.headers) : null;
  const destination = isDestination(a.url);
  const what = destination ? "message" : "request";
  // Its endpoint's transformation made this request: what is shown is what it returned, as sent.
  const transformed = a.request?.transformed === true;
  const cancelled = a.status === "cancelled";
  // The transformation failed or never ran: `response_body` says why, not a receiver.
  const untransformed = madeNoRequest(a.error);
  const noRequest = cancelled || untransformed;
  return (
    <>
      <p className="breadcrumb">
        <Link href={paths.event(base, a.event)}>← Event {a.event}</Link>
      </p>
      <PageHeader title={`Attempt ${a.attempt_number}`}>
        <span aria-live="polite">
          <Status value={a.status} />
        </span>
      </PageHeader>
      <section className="card" aria-labelledby="attempt-props">
        <h2 id="attempt-props" className="visually-hidden">
          Properties
        </h2>
        <dl className="props">
          <dt>Id</dt>
          <dd className="mono">{a.id}</dd>
          <dt>Event</dt>
          <dd>
            <Link className="mono" href={paths.event(base, a.event)}>
              {a.event}
            </Link>
          </dd>
          <dt>Endpoint</dt>
          <dd>
            <Link className="mono" href={paths.endpoint(base, a.endpoint)}>
              {a.url}
            </Link>{" "}
            <DestinationLabel url={a.url} />
          </dd>
          {destination ? (
            <>
              <dt>Delivered to</dt>
              <dd>
                <Receipt attempt={a} />
              </dd>
            </>
          ) : (
            <>
              <dt>Response status</dt>
              <dd>{a.response_status ?? <span className="muted">No response</span>}</dd>
            </>
          )}
          <dt>Error kind</dt>
          <dd>
            {a.error ? (
              <>
                <span className="mono">{a.error}</span>
                <ErrorKindMeaning kind={a.error} />
              </>
            ) : (
              <span className="muted">None</span>
            )}
          </dd>
          <dt>Duration</dt>
          <dd>{a.duration_ms === null ? <span className="muted">—</span> : `${a.duration_ms} ms`}</dd>
          <dt>Trace id</dt>
          <dd className="mono">{a.trace_id ?? <span className="muted">None</span>}</dd>
          <dt>Scheduled</dt>
          <dd>
            <Time value={a.scheduled_at} />
          </dd>
          <dt>Created</dt>
          <dd>
            <Time value={a.created_at} />
          </dd>
          <dt>Completed</dt>
          <dd>
            <Time value={a.completed_at} fallback="not yet" />
          </dd>
        </dl>
      </section>
      <div className="grid exchange">
        <section className="card" aria-labelledby="request-title">
          <h2 id="request-title">
            {transformed ? `Transformed ${what}` : destination ? "Message" : "Request"}
          </h2>
          {transformed ? (
            <p className="notice notice-info">
              Made by the endpoint's transformation: the {destination ? "headers" : "method, URL, headers"}{" "}
              and body below are those it returned, as sent and signed.
            </p>
          ) : null}
          {noRequest ? null : (
            <p className="mono">
              {destination ? "Published to" : (a.request?.method ?? "POST")} {a.request?.url ?? a.url}
            </p>
          )}
          {a.request === null ? (
            <p className="muted">{notSent(a)}</p>
          ) : (
            <>
              <h3>Headers</h3>
              {headers ? (
                <HeaderTable headers={headers} caption="Request headers" />
              ) : (
                <p className="muted">Not recorded.</p>
              )}
              <h3>{transformed ? "Transformed body" : "Body"}</h3>
              {a.request.body === null ? (
                <p className="muted">Payload erased.</p>
              ) : (
                <BodyBlock body={a.request.body} label="Request body" />
              )}
            </>
          )}
        </section>
        {destination ? (
          <section className="card" aria-labelledby="response-title">
            <h2 id="response-title">Delivered to</h2>
            <Receipt attempt={a} />
            {untransformed ? (
              <Why body={a.response_body} />
            ) : a.status === "failed" && a.response_body ? (
              <>
                <h3>What the destination said</h3>
                <BodyBlock body={a.response_body} label="The destination's answer" />
              </>
            ) : null}
          </section>
        ) : (
          <section className="card" aria-labelledby="response-title">
            <h2 id="response-title">Response</h2>
            {noRequest ? (
              <>
                <p className="muted">None: no request was made.</p>
                {untransformed ? <Why body={a.response_body} /> : null}
              </>
            ) : (
              <>
                <p>
                  {a.response_status !== null ? (
                    <>
                      Status <strong>{a.response_status}</strong>
                    </>
                  ) : (
                    <span className="muted">No response{a.error ? ` (${a.error})` : ""}</span>
                  )}
                </p>
                <h3>Body</h3>
                <BodyBlock body={a.response_body} label="Response body" />
              </>
            )}
          </section>
        )}
      </div>
    </>
  );
}

function HeaderTable({ headers, caption }: { headers: [string, string][]; caption: string }) {
  return (
    <div className="table-wrap">
      <table className="header-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {headers.map(([name, value]) => (
            <tr key={name}>
              <td className="mono">{name}</td>
              <td className="mono">{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Where a destination's attempt went (its receipt), or why it went nowhere. */
function Receipt({ attempt: a }: { attempt: AttemptWithRequest }) {
  if (a.status === "pending") return <span className="muted">Not yet</span>;
  if (a.status === "cancelled") return <span className="muted">Nowhere: {CANCELLED}</span>;
  if (a.status === "succeeded")
    return a.response_body ? (
      <span className="mono">{a.response_body}</span>
    ) : (
      <span className="muted">Delivered (no receipt recorded)</span>
    );
  return <span className="muted">Not delivered{a.error ? ` (${a.error})` : ""}</span>;
}

const CANCELLED = "the endpoint's transformation cancelled it, and nothing was sent.";

/** Why an attempt has no request to show. */
function notSent(a: AttemptWithRequest): string {
  if (a.status === "pending") return "Not sent yet.";
  if (a.status === "cancelled") return `Cancelled: ${CANCELLED}`;
  if (a.error === "transformation_error")
    return "None: the endpoint's transformation failed, and nothing was sent.";
  if (a.error === "transformation_busy")
    return "None: the endpoint's transformation was not run (Herald's workers were busy), and nothing was sent.";
  return "The request was not recorded.";
}

/** Why a transformation left no request: what it threw, or why it was not run. */
function Why({ body }: { body: string | null }) {
  return body ? (
    <>
      <h3>Why</h3>
      <BodyBlock body={body} label="Why no request was made" />
    </>
  ) : null;
}

function ErrorKindMeaning({ kind }: { kind: string }) {
  const meaning = errorKindMeaning(kind);
  return meaning ? <span className="muted"> — {meaning}</span> : null;
}
