import type { Endpoint } from "@herald/sdk/types";

/**
 * The endpoint form's transformation as text: the starter it offers, what a save sends, and
 * where in the code an error points (its line, as the API names it).
 */

/** The API's limit on the source, in bytes of UTF-8 (docs/transformations.md). */
export const MAX_TRANSFORMATION_BYTES = 65_536;

/** Offered when the box is empty: a handler that changes nothing, saying what it could change. */
export const STARTER_TRANSFORMATION = `// Herald calls handler before each delivery to this endpoint, with the request it would make:
//   webhook.event_type  the event's type, such as "invoice.paid"
//   webhook.payload     the body: { type, timestamp, data }, the event's data under data
//   webhook.headers     this endpoint's custom headers, names lower-cased
//   webhook.method      "POST" (may be set to "PUT" or "PATCH")
//   webhook.url         this endpoint's URL (may be set to another http or https URL)
// Change what you need and return it. Set webhook.cancel = true to send nothing.
function handler(webhook) {
  // For example: webhook.payload = { text: "New " + webhook.event_type + " event" };
  return webhook;
}
`;

/** The source's size as the API counts it. */
export const byteLength = (text: string): number => new TextEncoder().encode(text).length;

/** The box holds no code: saving it means no transformation. */
export const isBlank = (text: string): boolean => !text.trim();

/**
 * The body's `transformation`, only when the box differs from what is saved: an untouched one
 * is not compiled again on every save of the endpoint's other fields. Emptied: null removes it.
 */
export function transformationBody(
  text: string,
  saved: Pick<Endpoint, "transformation"> | null,
): { transformation?: string | null } {
  const next = isBlank(text) ? null : text;
  return next === (saved?.transformation ?? null) ? {} : { transformation: next };
}

/** The line an error message names at its end, "… (line 2)"; null when it names none. */
export function lineInMessage(message: string): number | null {
  // "(line 3)", or the parenthesis of a loop stopped ("(at line 3 or later in it)").
  const match = /\((?:at )?line (\d+)(?: or later in it)?\)\s*$/.exec(message);
  return match ? Number(match[1]) : null;
}

/** The numbers beside the editor's lines, 1 to the last (an empty box has one line). */
export const lineNumbers = (text: string): number[] =>
  Array.from({ length: text.split("\n").length }, (_, i) => i + 1);

/**
 * Where line `line` (from 1) starts and ends in `text`, its newline left out; a line past the
 * end is the last one.
 */
export function lineRange(text: string, line: number): { start: number; end: number } {
  const lines = text.split("\n");
  const index = Math.min(Math.max(line, 1), lines.length) - 1;
  let start = 0;
  for (let i = 0; i < index; i++) start += (lines[i] as string).length + 1;
  return { start, end: start + (lines[index] as string).length };
}
