/**
 * Customer data (payloads, response bodies) as text, never as HTML: React escapes strings,
 * and nothing here uses dangerouslySetInnerHTML.
 */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return <CodeBlock text={text} label={label} />;
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
  return <CodeBlock text={shown} label={label} />;
}

/**
 * Long lines scroll sideways inside the block, so it takes focus (tabIndex 0): keyboard users
 * scroll it with the arrow keys too.
 */
function CodeBlock({ text, label }: { text: string; label: string }) {
  return (
    <figure className="code-figure">
      <figcaption className="visually-hidden">{label}</figcaption>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard. */}
      <pre className="code" tabIndex={0}>
        {text}
      </pre>
    </figure>
  );
}
