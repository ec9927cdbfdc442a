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
