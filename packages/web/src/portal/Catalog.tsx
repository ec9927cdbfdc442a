import type { EventType } from "@herald/sdk/types";
import { useId, useState } from "react";
import { setQuery, useLocation } from "../router.tsx";
import { Field } from "../ui/Field.tsx";
import { JsonBlock } from "../ui/Json.tsx";
import { PageHeader } from "../ui/Layout.tsx";
import { Empty, ErrorNotice, Loading } from "../ui/Notice.tsx";
import { useEventTypes } from "../ui/useEventTypes.ts";
import { SchemaTree } from "./SchemaTree.tsx";

/** Every event type this app can receive, each with its schema beside its name and an example. */
export function Catalog() {
  const types = useEventTypes();
  const { query } = useLocation();
  const search = query.get("q") ?? "";
  const needle = search.trim().toLowerCase();
  const shown = types.data?.filter(
    (t) => !needle || t.name.includes(needle) || t.description.toLowerCase().includes(needle),
  );
  return (
    <>
      <PageHeader title="Event catalog" />
      <p className="muted lede">The events this app sends, with the shape of each payload.</p>
      <ErrorNotice error={types.error} onRetry={types.reload} />
      {types.data && types.data.length > 5 ? (
        <div className="filters">
          <Field label="Search event types">
            {(props) => (
              <input
                {...props}
                type="search"
                value={search}
                onChange={(e) => setQuery({ q: e.target.value })}
              />
            )}
          </Field>
        </div>
      ) : null}
      {!shown ? (
        types.error ? null : (
          <Loading label="Loading the catalog…" />
        )
      ) : shown.length === 0 ? (
        <Empty title={needle ? "No event type matches" : "No event types yet"}>
          {needle ? "Try another name." : "Event types show here once they are defined."}
        </Empty>
      ) : (
        <div className="catalog">
          {shown.map((t) => (
            <CatalogItem key={t.name} type={t} />
          ))}
        </div>
      )}
    </>
  );
}

function CatalogItem({ type }: { type: EventType }) {
  const id = useId();
  const [raw, setRaw] = useState(false);
  return (
    <article className="card catalog-item" aria-labelledby={`${id}-name`}>
      <div className="catalog-name">
        <h2 id={`${id}-name`} className="mono">
          {type.name}
        </h2>
        <p>{type.description || <span className="muted">No description.</span>}</p>
      </div>
      <div className="catalog-schema">
        <div className="catalog-schema-head">
          <h3>Schema</h3>
          {type.schema ? (
            <fieldset className="segmented">
              <legend className="visually-hidden">Show the schema of {type.name} as</legend>
              <button type="button" aria-pressed={!raw} onClick={() => setRaw(false)}>
                Fields
              </button>
              <button type="button" aria-pressed={raw} onClick={() => setRaw(true)}>
                JSON
              </button>
            </fieldset>
          ) : null}
        </div>
        {!type.schema ? (
          <p className="muted">No schema: any JSON object is accepted.</p>
        ) : raw ? (
          <JsonBlock value={type.schema} label={`JSON schema of ${type.name}`} />
        ) : (
          <SchemaTree schema={type.schema} label={`Fields of ${type.name}`} />
        )}
        {type.example !== null && type.example !== undefined ? (
          <>
            <h3 className="catalog-example-title">Example payload</h3>
            <JsonBlock value={type.example} label={`Example payload of ${type.name}`} />
          </>
        ) : null}
      </div>
    </article>
  );
}
