import type { AuditRecord } from "@herald/sdk/types";
import { useState } from "react";
import { setQuery, useLocation } from "../router.tsx";
import { Field } from "../ui/Field.tsx";
import { PageHeader } from "../ui/Layout.tsx";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Pager, usePagedList } from "../ui/paging.tsx";
import { POLL_MS } from "../ui/poll.ts";
import { Time } from "../ui/Time.tsx";

const FILTERS = ["actor", "action", "object"] as const;
type Filter = (typeof FILTERS)[number];

const LABELS: Record<Filter, { label: string; placeholder: string }> = {
  actor: { label: "Actor", placeholder: "key_…, ses_… or an email" },
  action: { label: "Action", placeholder: "endpoint.updated, or endpoint." },
  object: { label: "Object", placeholder: "ep_…, app_…, a type's name" },
};

const ACTORS: Record<string, string> = {
  api_key: "API key",
  dashboard_session: "Dashboard session",
  portal_session: "Portal session",
  person: "Signed in",
  operator: "Operator",
};

/** Who changed what in the account, newest first, filtered by actor, action and object. */
export function AuditLog() {
  const { query } = useLocation();
  const applied = Object.fromEntries(FILTERS.map((f) => [f, query.get(f) ?? ""])) as Record<Filter, string>;
  const [draft, setDraft] = useState(applied);
  const list = usePagedList<AuditRecord>(
    "/v3/audit-log",
    Object.fromEntries(FILTERS.filter((f) => applied[f]).map((f) => [f, applied[f]])),
    POLL_MS.acrossApps,
  );
  const records = list.data?.data ?? [];
  const any = FILTERS.some((f) => applied[f]);
  return (
    <>
      <PageHeader title="Audit log" />
      <form
        className="filters"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(Object.fromEntries(FILTERS.map((f) => [f, draft[f].trim() || undefined])));
        }}
      >
        {FILTERS.map((f) => (
          <Field key={f} label={LABELS[f].label}>
            {(props) => (
              <input
                {...props}
                type="search"
                value={draft[f]}
                placeholder={LABELS[f].placeholder}
                onChange={(e) => setDraft({ ...draft, [f]: e.target.value })}
              />
            )}
          </Field>
        ))}
        <button type="submit">Filter</button>
        {any ? (
          <button
            type="button"
            className="button-secondary"
            onClick={() => {
              setDraft({ actor: "", action: "", object: "" });
              setQuery({ actor: undefined, action: undefined, object: undefined });
            }}
          >
            Clear filters
          </button>
        ) : null}
      </form>
      <ErrorNotice error={list.error} onRetry={list.reload} />
      {!list.data ? (
        list.error ? null : (
          <Loading label="Loading the audit log…" />
        )
      ) : records.length || list.pager.hasPrevious ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Audit log</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Action</th>
                <th scope="col">Object</th>
                <th scope="col">Actor</th>
                <th scope="col" className="hide-narrow">
                  Fields
                </th>
                <th scope="col" className="hide-narrow">
                  From
                </th>
              </tr>
            </thead>
            <tbody>
              {records.map((r) => (
                <tr key={r.id}>
                  <td>
                    <Time value={r.created_at} />
                  </td>
                  <td className="mono">{r.action}</td>
                  <td>
                    <span className="muted">{r.target.type}</span>{" "}
                    <span className="mono">{r.target.id ?? "—"}</span>
                  </td>
                  <td>
                    {ACTORS[r.actor.type] ?? r.actor.type}{" "}
                    <span className="mono">{r.actor.name ?? r.actor.id}</span>
                  </td>
                  <td className="hide-narrow">
                    {r.fields.length ? r.fields.join(", ") : <span className="muted">—</span>}
                  </td>
                  <td className="hide-narrow mono" title={r.request_id ?? undefined}>
                    {r.source_ip ?? "—"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <Empty title={any ? "No records match" : "No changes yet"}>
          Every change made through the API, the dashboard or the portal is recorded here: who made it, what
          it changed, and where it came from.
        </Empty>
      )}
      <Pager pager={list.pager} label="Audit log" />
    </>
  );
}
