import { unstorableAt } from "@herald/db/text";
import { invalid } from "./errors.ts";

/**
 * Refuses, with a 400 that names the field, any text PostgreSQL cannot store: a NUL (U+0000)
 * or an unpaired surrogate, anywhere in a path parameter, the query or the body (event `data`
 * and a schema included, keys as well as values). Without this check such a value reaches the
 * database and fails there: a 500, and for an event, its whole group commit retried one by one.
 */
export function checkStorable(parts: Record<string, unknown>[]): void {
  for (const part of parts) {
    const deep = tooDeepAt(part);
    if (deep !== null) {
      throw invalid(
        deep,
        `${deep} is nested more than ${DEPTH_MAX} levels deep; at most ${DEPTH_MAX}.`,
        "parameter_invalid",
      );
    }
    const path = unstorableAt(part);
    if (!path) continue;
    const [head, ...rest] = path;
    const param = (head ?? "") + rest.map((p) => `[${p}]`).join("");
    throw invalid(
      param,
      `${param} contains a character that cannot be stored: a NUL (\\u0000) or an unpaired UTF-16 surrogate.`,
      "parameter_invalid",
    );
  }
}

/**
 * How deep a body may nest. JSON.parse takes any depth, but what walks the value afterwards
 * (serializing it, checking it against a schema, storing it) recurses: 100,000 levels in a
 * 1 MiB body overflow the stack there, a 500 where the caller is at fault.
 */
export const DEPTH_MAX = 64;

/** The top-level field of `root` that nests deeper than DEPTH_MAX, or null; walked without recursion. */
function tooDeepAt(root: Record<string, unknown>): string | null {
  for (const [field, value] of Object.entries(root)) {
    const pending: [unknown, number][] = [[value, 1]];
    while (pending.length) {
      const [item, depth] = pending.pop()!;
      if (!item || typeof item !== "object") continue;
      if (depth > DEPTH_MAX) return field;
      for (const child of Object.values(item))
        if (child && typeof child === "object") pending.push([child, depth + 1]);
    }
  }
  return null;
}
