import fc from "fast-check";

/** What the API fuzzer's requests are made of (fuzz.ts, fuzzLargest.ts). */
// biome-ignore lint/suspicious/noExplicitAny: JSON Schema as the document holds it
export type Json = any;

export type Operation = { method: string; path: string; op: Json };
export type FuzzRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** What the request was, to print when a property fails. */
  label: string;
};

/** The request as sent, with its label: the request, not its 70,000-character values. */
export function made(
  method: string,
  path: string,
  search: URLSearchParams,
  headers: Record<string, string>,
  body: string | undefined,
  note = "",
): FuzzRequest {
  const qs = search.toString();
  const fullPath = qs ? `${path}?${qs}` : path;
  const shown = body && body.length > 300 ? `${body.slice(0, 300)}… (${body.length} chars)` : body;
  const label = `${note}${method.toUpperCase()} ${fullPath.slice(0, 300)}${fullPath.length > 300 ? `… (${fullPath.length} chars)` : ""} ${headers["content-type"] ?? ""} ${shown ?? ""}`;
  const request: FuzzRequest = { method: method.toUpperCase(), path: fullPath, headers, body, label };
  // How fast-check prints a failing case.
  return Object.assign(request, { [fc.toStringMethod]: () => label });
}
