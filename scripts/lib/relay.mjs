// How `npm start` shows its services' output: pino's JSON lines made readable and tagged with
// the service. Node built-ins only, as the rest of scripts/lib.

const levels = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };

/** pino JSON → one readable line: `time level message key=value…`; any other line as it is. */
export function pretty(line) {
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof entry !== "object" || entry === null) return line;
  const { time, level, msg, service: _s, pid: _p, hostname: _h, ...rest } = entry;
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  const clock = typeof time === "string" ? time.slice(11, 23) : "";
  return `${clock} ${(levels[level] ?? level).padEnd(5)} ${msg ?? ""}${fields ? ` ${fields}` : ""}`;
}

/**
 * Copies a service's output to `out`, each line prettified and tagged, in one write per chunk
 * read rather than one per line: under load a service logs thousands of lines a second, and a
 * write each cost this process (on the same cores as the services) twice the CPU. A line cut
 * between chunks waits for its end; a last line without one is written when the stream ends.
 */
export function relay(stream, tag, out) {
  let rest = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop();
    if (lines.length) out.write(lines.map((l) => `${tag} ${pretty(l)}\n`).join(""));
  });
  stream.on("end", () => {
    if (rest) out.write(`${tag} ${pretty(rest)}\n`);
  });
}
