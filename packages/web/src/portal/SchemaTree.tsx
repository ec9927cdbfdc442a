import type { JsonSchema } from "../types.ts";

/**
 * A JSON Schema as people read it: one line per field with its type, a required mark, its
 * enum or constant, format, limits and description; objects and arrays nest. Local `$ref`s
 * (`#/$defs/…`) are followed, except one already being shown above (a recursive schema says
 * so and stops there); at most 8 levels deep in any case.
 */
export function SchemaTree({ schema, label }: { schema: JsonSchema; label: string }) {
  const root = resolve(schema, schema);
  // The whole schema is being shown: a `$ref` to it (`#`) is recursion from the start.
  const above = new Set(["#", ...(refOf(schema) ? [refOf(schema)!] : [])]);
  return (
    <div className="schema-view">
      <p className="schema-root">
        <span className="schema-type">{typeOf(root)}</span>
        {root.description ? <span className="muted"> {String(root.description)}</span> : null}
      </p>
      {hasChildren(root) ? (
        <Children node={root} root={schema} depth={0} above={above} label={label} />
      ) : (
        <p className="muted">No fields described.</p>
      )}
    </div>
  );
}

const MAX_DEPTH = 8;

/** The `$ref`s being expanded on the way down to a node: meeting one again is recursion. */
type Above = ReadonlySet<string>;

function Field({
  name,
  node: raw,
  root,
  depth,
  above,
  required,
}: {
  name: string;
  node: JsonSchema;
  root: JsonSchema;
  depth: number;
  above: Above;
  required?: boolean;
}) {
  const ref = refOf(raw);
  const recursive = ref !== null && above.has(ref);
  const node = resolve(raw, root);
  const details = constraints(node);
  const inner = ref && !recursive ? new Set([...above, ref]) : above;
  return (
    <li>
      <span className="schema-name mono">{name}</span> <span className="schema-type">{typeOf(node)}</span>
      {required ? <span className="schema-required"> required</span> : null}
      {Array.isArray(node.enum) ? (
        <span className="schema-enum">
          {" "}
          one of{" "}
          {node.enum.map((v, i) => (
            <span key={JSON.stringify(v)}>
              {i ? ", " : ""}
              <code>{JSON.stringify(v)}</code>
            </span>
          ))}
        </span>
      ) : null}
      {"const" in node ? (
        <span className="schema-enum">
          {" "}
          always <code>{JSON.stringify(node.const)}</code>
        </span>
      ) : null}
      {details ? <span className="muted"> ({details})</span> : null}
      {node.description ? <div className="schema-description muted">{String(node.description)}</div> : null}
      {recursive ? (
        <span className="muted"> (recursive: see above)</span>
      ) : depth < MAX_DEPTH ? (
        <Children node={node} root={root} depth={depth + 1} above={inner} />
      ) : null}
    </li>
  );
}

/** What nests under a node: an object's fields, an array's items, or the variants of a union. */
function Children({
  node,
  root,
  depth,
  above,
  label,
}: {
  node: JsonSchema;
  root: JsonSchema;
  depth: number;
  above: Above;
  label?: string;
}) {
  const props = asObject(node.properties);
  const required = requiredOf(node);
  // The items as written (a `$ref` kept, for the recursion check) and as resolved (to look into).
  const rawItems = asObject(node.items);
  const items = rawItems ? resolve(rawItems, root) : null;
  const variants = (["oneOf", "anyOf", "allOf"] as const).flatMap((k) =>
    Array.isArray(node[k]) ? [[k, node[k] as unknown[]] as const] : [],
  );
  if (!props && !items && !variants.length) return null;
  return (
    <ul className="schema-tree" aria-label={label}>
      {props
        ? Object.entries(props).map(([name, child]) => (
            <Field
              key={name}
              name={name}
              node={asObject(child) ?? {}}
              root={root}
              depth={depth}
              above={above}
              required={required.has(name)}
            />
          ))
        : null}
      {items && (asObject(items.properties) || items.items || items.enum || items.description) ? (
        <Field name="each item" node={rawItems!} root={root} depth={depth} above={above} />
      ) : null}
      {variants.flatMap(([kind, list]) =>
        list.map((v, i) => (
          <Field
            // biome-ignore lint/suspicious/noArrayIndexKey: variants have no identity but their place.
            key={`${kind}-${i}`}
            name={`${kind === "allOf" ? "all of" : kind === "anyOf" ? "any of" : "one of"} #${i + 1}`}
            node={asObject(v) ?? {}}
            root={root}
            depth={depth}
            above={above}
          />
        )),
      )}
    </ul>
  );
}

function hasChildren(node: JsonSchema): boolean {
  return Boolean(node.properties || node.items || node.oneOf || node.anyOf || node.allOf);
}

function asObject(v: unknown): JsonSchema | null {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as JsonSchema) : null;
}

function requiredOf(node: JsonSchema): Set<string> {
  return new Set(Array.isArray(node.required) ? node.required.map(String) : []);
}

/** A local `$ref` (`#/…`, including `#` itself), or null. */
function refOf(node: JsonSchema): string | null {
  const ref = typeof node.$ref === "string" ? node.$ref : null;
  return ref === "#" || ref?.startsWith("#/") ? ref : null;
}

/** Follows a local `$ref` (`#/$defs/x`, `#/definitions/x`, `#`); anything else stays as written. */
function resolve(node: JsonSchema, root: JsonSchema): JsonSchema {
  const ref = refOf(node);
  if (!ref) return node;
  if (ref === "#") return { ...root, ...node, $ref: undefined };
  let at: unknown = root;
  for (const part of ref.slice(2).split("/"))
    at = asObject(at)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  const found = asObject(at);
  return found ? { ...found, ...node, $ref: undefined } : node;
}

/** The type as written: `string`, `integer | null`, `array of string`, `object`. */
export function typeOf(node: JsonSchema): string {
  const t = node.type;
  if (Array.isArray(t)) return t.map(String).join(" | ");
  if (t === "array") {
    const items = asObject(node.items);
    const inner = items ? typeOf(items) : "any";
    return `array of ${inner}`;
  }
  if (typeof t === "string") return node.format ? `${t} (${String(node.format)})` : t;
  if (Array.isArray(node.enum)) return "enum";
  if ("const" in node) return "constant";
  if (node.properties) return "object";
  // A local reference by the name it is defined under (`#/$defs/node` → `node`; `#`, the root).
  const ref = refOf(node);
  if (ref) return ref === "#" ? "object" : (ref.split("/").at(-1) ?? ref);
  if (typeof node.$ref === "string") return node.$ref;
  if (node.oneOf) return "one of";
  if (node.anyOf) return "any of";
  if (node.allOf) return "all of";
  return "any";
}

/** Limits worth knowing, in words. */
function constraints(node: JsonSchema): string {
  const out: string[] = [];
  const n = (k: string) => (typeof node[k] === "number" ? (node[k] as number) : undefined);
  if (n("minimum") !== undefined) out.push(`≥ ${n("minimum")}`);
  if (n("exclusiveMinimum") !== undefined) out.push(`> ${n("exclusiveMinimum")}`);
  if (n("maximum") !== undefined) out.push(`≤ ${n("maximum")}`);
  if (n("exclusiveMaximum") !== undefined) out.push(`< ${n("exclusiveMaximum")}`);
  if (n("minLength") !== undefined) out.push(`at least ${n("minLength")} chars`);
  if (n("maxLength") !== undefined) out.push(`at most ${n("maxLength")} chars`);
  if (n("minItems") !== undefined) out.push(`at least ${n("minItems")} items`);
  if (n("maxItems") !== undefined) out.push(`at most ${n("maxItems")} items`);
  if (typeof node.pattern === "string") out.push(`matches ${node.pattern}`);
  if ("default" in node) out.push(`default ${JSON.stringify(node.default)}`);
  return out.join(", ");
}
