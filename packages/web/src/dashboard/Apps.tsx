import type { App } from "@herald/sdk/types";
import { type FormEvent, useState } from "react";
import { ApiError, api } from "../api.ts";
import { Link, navigate, setQuery, useLocation } from "../router.tsx";
import { Dialog } from "../ui/Dialog.tsx";
import { Field } from "../ui/Field.tsx";
import { useAction } from "../ui/hooks.ts";
import { PageHeader } from "../ui/Layout.tsx";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Pager, usePagedList } from "../ui/paging.tsx";
import { Time } from "../ui/Time.tsx";
import { appBase } from "./AppView.tsx";
import { NewAppForm } from "./NewAppForm.tsx";

/** 50 a page: search filters the page shown, and an exact id or uid is looked up as well. */
const PAGE = 50;

export function Apps() {
  const { query } = useLocation();
  const q = query.get("q") ?? "";
  const [creating, setCreating] = useState(false);
  const list = usePagedList<App>("/v3/apps", { limit: PAGE });
  const exact = useExactApp(q.trim());
  const needle = q.trim().toLowerCase();
  const loaded = list.data?.data ?? [];
  const shown = needle
    ? loaded.filter((a) => [a.name, a.uid ?? "", a.id].some((s) => s.toLowerCase().includes(needle)))
    : loaded;
  const { found } = exact;
  if (found && !shown.some((a) => a.id === found.id)) shown.unshift(found);
  const search = (e: FormEvent) => {
    e.preventDefault();
    if (needle && !shown.length) void exact.find.run();
  };

  return (
    <>
      <PageHeader title="Apps">
        <button type="button" onClick={() => setCreating(true)}>
          New app
        </button>
      </PageHeader>
      <search>
        <form className="filters" onSubmit={search}>
          <Field label="Search apps" hint="By name, uid or id; Enter looks up an exact id or uid.">
            {(props) => (
              <input {...props} type="search" value={q} onChange={(e) => setQuery({ q: e.target.value })} />
            )}
          </Field>
        </form>
      </search>
      <ErrorNotice error={list.error ?? exact.find.error} onRetry={list.error ? list.reload : undefined} />
      {!list.data ? (
        list.error ? null : (
          <Loading label="Loading apps…" />
        )
      ) : shown.length ? (
        <AppsTable apps={shown} />
      ) : needle ? (
        <Empty title={`No app matches “${q.trim()}”`}>
          {exact.missed === q.trim()
            ? "No app has this id or uid either."
            : "Press Enter to look it up as an exact id or uid."}
        </Empty>
      ) : (
        <Empty title="No apps yet">
          An app is one of your customers. Create one, then send it events and give its customer a portal
          link.
        </Empty>
      )}
      <Pager pager={list.pager} label="Apps" />
      <Dialog open={creating} title="New app" onClose={() => setCreating(false)}>
        <NewAppForm
          onCancel={() => setCreating(false)}
          onCreated={(app) => {
            setCreating(false);
            navigate(appBase(app.id));
          }}
        />
      </Dialog>
    </>
  );
}

function AppsTable({ apps }: { apps: App[] }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Apps</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">UID</th>
            <th scope="col" className="hide-narrow">
              ID
            </th>
            <th scope="col" className="hide-narrow">
              Created
            </th>
          </tr>
        </thead>
        <tbody>
          {apps.map((app) => (
            <tr key={app.id}>
              <td>
                <Link href={appBase(app.id)}>{app.name}</Link>
              </td>
              <td className="mono">{app.uid ?? <span className="muted">—</span>}</td>
              <td className="mono hide-narrow">{app.id}</td>
              <td className="hide-narrow">
                <Time value={app.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * Enter in the search box with no match on the pages loaded: look the text up as an exact id or
 * uid (on request only, since a miss is a 404).
 */
function useExactApp(q: string) {
  // Each answer remembers what it answered, so typing something else sets it aside.
  const [answer, setAnswer] = useState<{ q: string; app: App | null } | null>(null);
  const find = useAction(async () => {
    try {
      setAnswer({ q, app: await api.get<App>(`/v3/apps/${encodeURIComponent(q)}`) });
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) setAnswer({ q, app: null });
      else throw err;
    }
  });
  const current = answer?.q === q ? answer : null;
  return { found: current?.app ?? null, missed: current && !current.app ? q : null, find };
}
