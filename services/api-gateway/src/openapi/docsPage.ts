import { curlExample, type Entry, jsonBody } from "./docsCurl.ts";
import {
  escapeHtml,
  type Field,
  fieldsOf,
  fieldTable,
  inline,
  isRecord,
  literal,
  p,
  pre,
  refName,
  schemaLink,
  slug,
} from "./docsHtml.ts";
import { errorDescription, introSections } from "./docsIntro.ts";
import { docsStyle } from "./docsStyle.ts";
import type { OpenApiDocument, Operation } from "./document.ts";

/**
 * The API reference served at GET /docs: one self-contained HTML page rendered from the
 * OpenAPI document at startup. No scripts, fonts or styles from elsewhere.
 */

// ---- Operations ----

function entriesByTag(doc: OpenApiDocument): Map<string, Entry[]> {
  const groups = new Map<string, Entry[]>(doc.tags.map((t) => [t.name, []]));
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = op.tags[0] ?? "Other";
      groups.set(tag, [...(groups.get(tag) ?? []), { method, path, op }]);
    }
  }
  return groups;
}

const opAnchor = (op: Operation): string => `op-${op.operationId}`;
const methodBadge = (method: string): string =>
  `<span class="method method-${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span>`;

function responseSchemaHtml(schema: unknown): string {
  const ref = refName(schema);
  if (ref) return schemaLink(ref);
  const props = isRecord(schema) && isRecord(schema.properties) ? schema.properties : {};
  const item = isRecord(props.data) ? refName(props.data.items) : undefined;
  if (item) return `<a href="#paging">list</a> of ${schemaLink(item)}`;
  const shown = Object.entries(props).map(
    ([k, v]) => `"${k}": ${isRecord(v) && "const" in v ? JSON.stringify(v.const) : "…"}`,
  );
  return literal(`{ ${shown.join(", ")} }`);
}

function successHtml(op: Operation): string {
  const [status, response] = Object.entries(op.responses).find(([s]) => s.startsWith("2")) ?? [];
  if (!status || !isRecord(response)) return "";
  const content = isRecord(response.content) ? response.content["application/json"] : undefined;
  const schema = isRecord(content) ? content.schema : undefined;
  const text = typeof response.description === "string" ? ` ${inline(response.description)}` : "";
  return `<p><span class="status status-ok">${escapeHtml(status)}</span> ${responseSchemaHtml(schema)}.${text}</p>`;
}

function errorsHtml(doc: OpenApiDocument, op: Operation): string {
  const items = Object.keys(op.responses)
    .filter((s) => !s.startsWith("2"))
    .map((s) => {
      const title = escapeHtml(errorDescription(doc, s).replace(/`/g, ""));
      return `<li><a class="status" href="#status-${escapeHtml(s)}" title="${title}">${escapeHtml(s)}</a></li>`;
    });
  return `<ul class="statuses" aria-label="Error statuses">${items.join("")}</ul>`;
}

function operationSection(doc: OpenApiDocument, { method, path, op }: Entry): string {
  const params = op.parameters.map(
    (x): Field => ({
      name: x.name,
      in: x.in,
      required: x.required,
      schema: { ...x.schema, description: x.description },
    }),
  );
  const body = fieldsOf(jsonBody(op));
  const admin = op.security.some((s) => "adminToken" in s);
  return `<section class="op" id="${opAnchor(op)}" aria-labelledby="${opAnchor(op)}-title">
<h3 id="${opAnchor(op)}-title">${escapeHtml(op.summary)}</h3>
<p class="route">${methodBadge(method)} <code>${escapeHtml(path)}</code></p>
${op.description ? p(op.description) : ""}
${admin ? p("Operator route: authenticate with `Authorization: Bearer <ADMIN_TOKEN>`, not an API key.") : ""}
${scopeNote(op)}
${params.length ? `<h4>Parameters</h4>${fieldTable(params, true)}` : ""}
${body.length ? `<h4>Body</h4><p class="note">JSON or form-encoded, with the same meaning.</p>${fieldTable(body, true)}` : ""}
<h4>Response</h4>${successHtml(op)}
<h4>Errors</h4>${errorsHtml(doc, op)}
<h4>Example</h4>${pre(curlExample({ method, path, op }))}
</section>`;
}

/** The scope an account's operation needs, as the page says it. */
function scopeNote(op: Operation): string {
  const scope = op["x-herald-scope"];
  if (!scope) return "";
  return scope === "any"
    ? p("Scope: any key may call it (`x-herald-scope: any`).")
    : p(
        `Scope: \`${scope}\` (or \`*\`${scope.endsWith(":read") ? `, or \`${scope.replace(/:read$/, ":write")}\`` : ""}).`,
      );
}

// ---- Page ----

function tagSection(doc: OpenApiDocument, tag: string, entries: Entry[]): string {
  const description = doc.tags.find((t) => t.name === tag)?.description;
  return `<section id="tag-${slug(tag)}" aria-labelledby="tag-${slug(tag)}-title">
<h2 id="tag-${slug(tag)}-title">${escapeHtml(tag)}</h2>${description ? `<div class="tag-intro">${p(description)}</div>` : ""}
${entries.map((e) => operationSection(doc, e)).join("\n")}
</section>`;
}

function objectsSection(doc: OpenApiDocument): string {
  const objects = Object.entries(doc.components.schemas).map(
    ([name, schema]) => `<section id="schema-${slug(name)}" aria-labelledby="schema-${slug(name)}-title">
<h3 id="schema-${slug(name)}-title">${escapeHtml(name)}</h3>
${typeof schema.description === "string" ? p(schema.description) : ""}${fieldTable(fieldsOf(schema), false)}
</section>`,
  );
  return `<section id="objects" aria-labelledby="objects-title"><h2 id="objects-title">Objects</h2>
${p("The objects the API returns. A type `or null` means the field is present with the value `null`.")}
${objects.join("\n")}</section>`;
}

function navGroup(title: string, href: string, links: string[], compact = false): string {
  const id = `nav-${slug(title)}`;
  return `<div><p class="nav-group" id="${id}"><a href="${href}">${escapeHtml(title)}</a></p>
<ul aria-labelledby="${id}"${compact ? ' class="compact"' : ""}>${links.map((l) => `<li>${l}</li>`).join("")}</ul></div>`;
}

function navHtml(doc: OpenApiDocument, groups: Map<string, Entry[]>, intro: string[]): string {
  const link = (href: string, html: string) => `<a href="${href}">${html}</a>`;
  const opLinks = (entries: Entry[]) =>
    entries.map(({ method, op }) =>
      link(`#${opAnchor(op)}`, `${methodBadge(method)}<span>${escapeHtml(op.summary)}</span>`),
    );
  const introLinks = intro.map((t) => link(`#${slug(t)}`, escapeHtml(t)));
  const objectLinks = Object.keys(doc.components.schemas).map((n) =>
    link(`#schema-${slug(n)}`, escapeHtml(n)),
  );
  return `<nav aria-label="API reference">
<a class="brand" href="#top">${escapeHtml(String(doc.info.title ?? "API"))} <span>${escapeHtml(String(doc.info.version ?? ""))}</span></a>
<div class="groups">
${navGroup("Introduction", "#introduction", introLinks, true)}
${[...groups].map(([tag, entries]) => navGroup(tag, `#tag-${slug(tag)}`, opLinks(entries))).join("\n")}
${navGroup("Objects", "#objects", objectLinks, true)}
</div></nav>`;
}

export function renderDocsPage(doc: OpenApiDocument): string {
  const title = escapeHtml(String(doc.info.title ?? "API reference"));
  const groups = new Map([...entriesByTag(doc)].filter(([, entries]) => entries.length > 0));
  const intro = introSections(doc);
  const introHtml = intro
    .map(
      ([heading, html]) => `<section id="${slug(heading)}"><h2>${escapeHtml(heading)}</h2>${html}</section>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} reference</title>
<style>${docsStyle}</style>
</head>
<body id="top">
<a class="skip" href="#main">Skip to content</a>
<div class="layout">
${navHtml(
  doc,
  groups,
  intro.map(([heading]) => heading),
)}
<main id="main">
<header id="introduction"><h1>${title} reference</h1>
<p class="lead">Version ${escapeHtml(String(doc.info.version ?? ""))}. The machine-readable document is at <a href="/v3/openapi.json"><code>/v3/openapi.json</code></a>.</p></header>
${introHtml}
${[...groups].map(([tag, entries]) => tagSection(doc, tag, entries)).join("\n")}
${objectsSection(doc)}
</main>
</div>
</body>
</html>
`;
}
