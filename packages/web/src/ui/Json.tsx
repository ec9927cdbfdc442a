/**
 * Customer data (payloads, response bodies) as text, never as HTML: React escapes strings,
 * and nothing here uses dangerouslySetInnerHTML.
 */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return (
    <figure className="code-figure">
      <figcaption className="visually-hidden">{label}</figcaption>
      <pre className="code">{text}</pre>
    </figure>
  );
}

/** A body that may be JSON: pretty-printed when it parses, shown as sent when it does not. */
export function BodyBlock({ body, label }: { body: string | null; label: string }) {
  if (body === null || body === "") return <p className="muted">(empty)</p>;
  let shown = body;
  try {
    shown = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // Not JSON: show it as it came.
  }
  return (
    <figure className="code-figure">
      <figcaption className="visually-hidden">{label}</figcaption>
      <pre className="code">{shown}</pre>
    </figure>
  );
}
