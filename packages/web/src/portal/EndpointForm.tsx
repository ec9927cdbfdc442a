import type { Endpoint } from "@herald/sdk/types";
import { type FormEvent, type RefObject, useEffect, useRef, useState } from "react";
import { api } from "../api.ts";
import { useAppScope } from "../appScope.tsx";
import { Link, navigate } from "../router.tsx";
import { Field } from "../ui/Field.tsx";
import { useAction, useResource } from "../ui/hooks.ts";
import { PageHeader } from "../ui/Layout.tsx";
import { ErrorNotice, Loading } from "../ui/Notice.tsx";
import { AUTH_PARAMS, AuthFields, type AuthValues, authBody, authValues } from "./AuthFields.tsx";
import { paths } from "./data.ts";
import { EventTypePicker } from "./EventTypePicker.tsx";
import {
  FilterField,
  type FilterProblem,
  filterBody,
  filterText,
  isFilterParam,
  parseFilterText,
} from "./FilterField.tsx";
import {
  type HeaderRow,
  HeadersEditor,
  type HeadersEditorHandle,
  headerRowProblem,
  headersFromRows,
  rowsFromHeaders,
} from "./HeadersEditor.tsx";
import {
  LIMIT_PARAMS,
  LimitFields,
  type LimitParam,
  type LimitValues,
  limitBody,
  limitValues,
  UNREADABLE,
  unreadable,
} from "./LimitFields.tsx";

type Values = {
  url: string;
  description: string;
  eventTypes: string[];
  /** The filter as JSON text; empty for none. */
  filter: string;
  headers: HeaderRow[];
} & LimitValues &
  AuthValues;

/** Create an endpoint (no `id`) or edit one. */
export function EndpointForm({ id }: { id?: string }) {
  const { readOnly } = useAppScope();
  const existing = useResource(
    () => (id ? api.get<Endpoint>(`/v3/endpoints/${encodeURIComponent(id)}`) : Promise.resolve(null)),
    [id],
  );
  const title = id ? "Edit endpoint" : "Add an endpoint";
  if (readOnly)
    return (
      <>
        <PageHeader title={title} />
        <p className="notice notice-info">This portal link is read-only: endpoints cannot be changed here.</p>
      </>
    );
  if (existing.error) return <ErrorNotice error={existing.error} onRetry={existing.reload} />;
  if (existing.data === undefined) return <Loading label="Loading the endpoint…" />;
  const e = existing.data;
  return (
    <EndpointFormFields
      id={id}
      title={title}
      saved={e}
      initial={{
        url: e?.url ?? "",
        description: e?.description ?? "",
        eventTypes: e?.event_types ?? [],
        filter: filterText(e?.filter),
        headers: rowsFromHeaders(e?.headers ?? {}),
        ...limitValues(e),
        ...authValues(e),
      }}
    />
  );
}

function EndpointFormFields({
  id,
  title,
  initial,
  saved,
}: {
  id?: string;
  title: string;
  initial: Values;
  saved: Endpoint | null;
}) {
  const { appId, base } = useAppScope();
  const [values, setValues] = useState<Values>(initial);
  const set = (change: Partial<Values>) => setValues((v) => ({ ...v, ...change }));
  const urlRef = useRef<HTMLInputElement>(null);
  const filterRef = useRef<HTMLTextAreaElement>(null);
  const headersRef = useRef<HeadersEditorHandle>(null);
  const limitRefs: Record<LimitParam, RefObject<HTMLInputElement | null>> = {
    rate_limit: useRef<HTMLInputElement>(null),
    max_in_flight: useRef<HTMLInputElement>(null),
  };
  /** A limit field the browser could not read as a number, held back before sending. */
  const [badLimit, setBadLimit] = useState<LimitParam | null>(null);
  /** Set when a submit was held back by a filter that is not JSON. */
  const [filterHeld, setFilterHeld] = useState(false);
  const parsedFilter = parseFilterText(values.filter);
  /** The filter as last sent: the API's word on it stands until it is changed. */
  const [sentFilter, setSentFilter] = useState<string | null>(null);
  /** Set when a submit was held back by header rows the form would not send. */
  const [heldBack, setHeldBack] = useState(false);
  const rowsWithProblems = values.headers.filter((row) => headerRowProblem(values.headers, row)).length;
  if (heldBack && !rowsWithProblems) setHeldBack(false);
  const save = useAction(async () => {
    const body = {
      url: values.url.trim(),
      description: values.description,
      event_types: values.eventTypes,
      filter: filterBody(parsedFilter),
      headers: headersFromRows(values.headers),
      ...limitBody(values),
      ...authBody(values, saved),
    };
    return id
      ? api.post<Endpoint>(`/v3/endpoints/${encodeURIComponent(id)}`, body)
      : api.post<Endpoint>("/v3/endpoints", { app: appId, ...body });
  });
  const param = save.error?.param ?? "";
  const apiErrorAt = (name: string) =>
    param === name || param.startsWith(`${name}[`) ? save.error!.message : null;
  const errorAt = (name: string) => (badLimit === name ? UNREADABLE : apiErrorAt(name));
  const headerError = (name: string) => (name && param === `headers[${name}]` ? save.error!.message : null);
  const rowNamed = values.headers.some((r) => r.name.trim() && param === `headers[${r.name.trim()}]`);
  const placed =
    ["url", "description", "event_types", "headers", "ordering", ...LIMIT_PARAMS, ...AUTH_PARAMS].some((n) =>
      apiErrorAt(n),
    ) || isFilterParam(param);
  const filterError: FilterProblem | null =
    filterHeld && parsedFilter.kind === "error"
      ? { message: `Not saved: the filter is not JSON. ${parsedFilter.message}` }
      : isFilterParam(param) && values.filter === sentFilter
        ? { message: save.error!.message, param }
        : null;

  // biome-ignore lint/correctness/useExhaustiveDependencies: the refs are stable; `param` is what changes.
  useEffect(() => {
    if (param === "url") urlRef.current?.focus();
    else if (param === "rate_limit" || param === "max_in_flight") limitRefs[param].current?.focus();
    else if (isFilterParam(param)) filterRef.current?.focus();
  }, [param]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    // Fields in the order shown: the filter (not JSON), then the header rows, then the limits.
    setFilterHeld(parsedFilter.kind === "error");
    if (parsedFilter.kind === "error") {
      filterRef.current?.focus();
      return;
    }
    if (rowsWithProblems) {
      setHeldBack(true);
      headersRef.current?.focusFirstProblem();
      return;
    }
    setHeldBack(false);
    const bad = unreadable(limitRefs);
    setBadLimit(bad);
    if (bad) {
      limitRefs[bad].current?.focus();
      return;
    }
    setSentFilter(values.filter);
    const saved = await save.run();
    if (saved) navigate(paths.endpoint(base, saved.id));
  };
  const cancel = id ? paths.endpoint(base, id) : paths.endpoints(base);

  return (
    <>
      <PageHeader title={title} />
      <form className="card form" onSubmit={submit} noValidate aria-label={title}>
        {save.error && !placed ? <ErrorNotice error={save.error} /> : null}
        <p className={heldBack ? "notice notice-error" : "visually-hidden"} role="alert">
          {heldBack
            ? `Not saved: ${rowsWithProblems === 1 ? "a custom header needs" : `${rowsWithProblems} custom headers need`} fixing (marked below).`
            : ""}
        </p>
        {save.error && placed ? (
          <p className="visually-hidden" role="alert">
            {save.error.message}
          </p>
        ) : null}
        <Field
          label="URL"
          hint="Where Herald sends this app's events: an http or https URL."
          error={errorAt("url")}
        >
          {(props) => (
            <input
              {...props}
              ref={urlRef}
              type="url"
              inputMode="url"
              required
              autoComplete="url"
              spellCheck={false}
              placeholder="https://example.com/webhooks"
              value={values.url}
              onChange={(e) => set({ url: e.target.value })}
            />
          )}
        </Field>
        <Field label="Description" hint="Optional: what this endpoint is for." error={errorAt("description")}>
          {(props) => (
            <input
              {...props}
              value={values.description}
              maxLength={4096}
              onChange={(e) => set({ description: e.target.value })}
            />
          )}
        </Field>
        <EventTypePicker
          selected={values.eventTypes}
          onChange={(eventTypes) => set({ eventTypes })}
          error={errorAt("event_types")}
        />
        <FilterField
          value={values.filter}
          onChange={(filter) => set({ filter })}
          eventTypes={values.eventTypes}
          appId={appId}
          error={filterError}
          inputRef={filterRef}
        />
        <HeadersEditor
          ref={headersRef}
          rows={values.headers}
          onChange={(headers) => set({ headers })}
          error={param.startsWith("headers") && !rowNamed ? save.error!.message : null}
          errorFor={headerError}
        />
        <LimitFields values={values} onChange={set} errorAt={errorAt} refs={limitRefs} />
        <AuthFields values={values} saved={saved} url={values.url} onChange={set} errorAt={apiErrorAt} />
        <div className="actions">
          <button type="submit" disabled={save.busy}>
            {save.busy ? "Saving…" : id ? "Save changes" : "Create endpoint"}
          </button>
          <Link className="button button-secondary" href={cancel}>
            Cancel
          </Link>
        </div>
      </form>
    </>
  );
}
