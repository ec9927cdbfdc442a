import type { Endpoint } from "@herald/sdk/types";
import { type FormEvent, type RefObject, useEffect, useRef, useState } from "react";
import { api } from "../api.ts";
import { useAppScope } from "../appScope.tsx";
import { Link, navigate } from "../router.tsx";
import {
  buildDestinationUrl,
  DESTINATION_CHOICES,
  type DestinationField,
  type DestinationType,
  type DestinationFields as DestinationValues,
  destinationProblems,
  EMPTY_FIELDS,
  readDestinationUrl,
  typeLabel,
  urlType,
} from "../ui/destinationUrl.ts";
import { Field } from "../ui/Field.tsx";
import { useAction, useResource } from "../ui/hooks.ts";
import { PageHeader } from "../ui/Layout.tsx";
import { ErrorNotice, Loading } from "../ui/Notice.tsx";
import { AUTH_PARAMS, AuthFields, type AuthValues, authBody, authValues } from "./AuthFields.tsx";
import { DestinationFields } from "./DestinationFields.tsx";
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
import { TransformationField, useTransformationField } from "./TransformationField.tsx";

type Values = {
  /** What the endpoint is: a webhook, or a destination whose URL is built from `destination`. */
  type: DestinationType;
  /** A webhook's URL as typed. */
  url: string;
  destination: DestinationValues;
  description: string;
  eventTypes: string[];
  /** The filter as JSON text; empty for none. */
  filter: string;
  headers: HeaderRow[];
  /** The transformation's code; empty for none. */
  transformation: string;
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
  const destination = e ? readDestinationUrl(e.url) : null;
  return (
    <EndpointFormFields
      id={id}
      title={title}
      saved={e}
      initial={{
        type: destination?.type ?? "http",
        url: destination ? "" : (e?.url ?? ""),
        destination: destination?.fields ?? EMPTY_FIELDS,
        description: e?.description ?? "",
        eventTypes: e?.event_types ?? [],
        filter: filterText(e?.filter),
        headers: rowsFromHeaders(e?.headers ?? {}),
        transformation: e?.transformation ?? "",
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
  if (heldBack && (!rowsWithProblems || values.type !== "http")) setHeldBack(false);
  const kind = values.type === "http" ? null : values.type;
  const destinationRefs = useRef<Partial<Record<DestinationField, HTMLElement | null>>>({});
  const problems = kind ? destinationProblems(kind, values.destination, saved?.url ?? null) : [];
  /** Set when a submit was held back by the destination's fields; their problems show from then on. */
  const [destinationHeld, setDestinationHeld] = useState(false);
  if (destinationHeld && !problems.length) setDestinationHeld(false);
  /** A webhook's own settings (custom headers, mutual TLS, OAuth2) that saving it as a destination removes. */
  const dropped = kind && saved && urlType(saved.url) === "http" ? webhookSettings(saved) : [];
  const url = kind ? buildDestinationUrl(kind, values.destination) : values.url.trim();
  const transformation = useTransformationField({
    id,
    appId,
    url,
    headers: kind ? undefined : headersFromRows(values.headers),
    value: values.transformation,
    onChange: (transformation) => set({ transformation }),
    saved,
    eventTypes: values.eventTypes,
  });
  const save = useAction(async () => {
    const body = {
      url,
      description: values.description,
      event_types: values.eventTypes,
      filter: filterBody(parsedFilter),
      ...(kind ? {} : { headers: headersFromRows(values.headers) }),
      ...limitBody(values),
      ...(kind ? droppedBody(dropped) : authBody(values, saved)),
      ...transformation.body,
    };
    return id
      ? api.post<Endpoint>(`/v3/endpoints/${encodeURIComponent(id)}`, body)
      : api.post<Endpoint>("/v3/endpoints", { app: appId, ...body });
  });
  const param = save.error?.param ?? "";
  const apiErrorAt = (name: string) =>
    param === name || param.startsWith(`${name}[`) ? save.error!.message : null;
  const problemAt = (field: DestinationField) =>
    destinationHeld ? (problems.find((p) => p.field === field)?.message ?? null) : null;
  const errorAt = (name: string) =>
    badLimit === name ? UNREADABLE : ((name === "url" ? problemAt("url") : null) ?? apiErrorAt(name));
  const headerError = (name: string) => (name && param === `headers[${name}]` ? save.error!.message : null);
  const rowNamed = values.headers.some((r) => r.name.trim() && param === `headers[${r.name.trim()}]`);
  const placed =
    [
      "url",
      "description",
      "event_types",
      "ordering",
      "transformation",
      ...LIMIT_PARAMS,
      ...(kind ? [] : ["headers", ...AUTH_PARAMS]),
    ].some((n) => apiErrorAt(n)) || isFilterParam(param);
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
    else if (param === "transformation") transformation.focusError(save.error!.message);
  }, [param]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    // Fields in the order shown: the destination's, the filter (not JSON), the header rows, the limits.
    setDestinationHeld(problems.length > 0);
    if (problems[0]) {
      const field = problems[0].field;
      (field === "url" ? urlRef.current : destinationRefs.current[field])?.focus();
      return;
    }
    setFilterHeld(parsedFilter.kind === "error");
    if (parsedFilter.kind === "error") {
      filterRef.current?.focus();
      return;
    }
    if (!kind && rowsWithProblems) {
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
        <p className={destinationHeld ? "notice notice-error" : "visually-hidden"} role="alert">
          {destinationHeld ? "Not saved: the destination's fields need fixing (marked below)." : ""}
        </p>
        {save.error && placed ? (
          <p className="visually-hidden" role="alert">
            {save.error.message}
          </p>
        ) : null}
        <Field label="Type" hint="Where events go: a webhook, or a queue, stream, topic or bucket.">
          {(props) => (
            <select
              {...props}
              value={values.type}
              onChange={(e) => set({ type: e.target.value as DestinationType })}
            >
              {DESTINATION_CHOICES.map((t) => (
                <option key={t.type} value={t.type}>
                  {t.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        {kind ? (
          <>
            <DestinationFields
              type={kind}
              values={values.destination}
              onChange={(change) => set({ destination: { ...values.destination, ...change } })}
              errorAt={problemAt}
              refs={destinationRefs}
            />
            {dropped.length ? (
              <p className="notice notice-info">
                {`Saved as a ${typeLabel(kind)} destination, this endpoint loses its ${listed(dropped)}: they are for webhooks.`}
              </p>
            ) : null}
            <Field
              label="URL"
              hint="Built from the fields above, as the API saves it: credentials show as [redacted]."
              error={errorAt("url")}
            >
              {(props) => (
                <input
                  {...props}
                  ref={urlRef}
                  readOnly
                  className="mono"
                  value={buildDestinationUrl(kind, values.destination, true)}
                />
              )}
            </Field>
          </>
        ) : (
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
        )}
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
        {kind ? null : (
          <HeadersEditor
            ref={headersRef}
            rows={values.headers}
            onChange={(headers) => set({ headers })}
            error={param.startsWith("headers") && !rowNamed ? save.error!.message : null}
            errorFor={headerError}
          />
        )}
        <LimitFields values={values} onChange={set} errorAt={errorAt} refs={limitRefs} />
        {kind ? null : (
          <AuthFields values={values} saved={saved} url={values.url} onChange={set} errorAt={apiErrorAt} />
        )}
        <TransformationField {...transformation.field} error={apiErrorAt("transformation")} />
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

/** What a saved webhook has of its own: custom headers, mutual TLS, OAuth2. */
function webhookSettings(saved: Endpoint): ("custom headers" | "mutual TLS" | "OAuth2")[] {
  return [
    ...(Object.keys(saved.headers).length ? (["custom headers"] as const) : []),
    ...(saved.tls ? (["mutual TLS"] as const) : []),
    ...(saved.oauth2 ? (["OAuth2"] as const) : []),
  ];
}

/**
 * A webhook turned destination sends its settings away: the API refuses `tls` and `oauth2`
 * for a destination, and saved headers do not follow a URL to another origin unless sent again.
 */
const droppedBody = (dropped: string[]) => ({
  ...(dropped.includes("custom headers") ? { headers: {} } : {}),
  ...(dropped.includes("mutual TLS") ? { tls: null } : {}),
  ...(dropped.includes("OAuth2") ? { oauth2: null } : {}),
});

const listed = (items: string[]) =>
  items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
