/** A timestamp in the viewer's time zone, with the exact UTC time on hover. */
const local = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

export function Time({ value, fallback = "—" }: { value: string | null | undefined; fallback?: string }) {
  if (!value) return <span className="muted">{fallback}</span>;
  const date = new Date(value);
  return (
    <time dateTime={value} title={`${date.toISOString().replace("T", " ").replace("Z", " UTC")}`}>
      {local.format(date)}
    </time>
  );
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

/** "in 5 minutes", "3 seconds ago", with the exact time on hover. */
export function Relative({ value }: { value: string | null | undefined }) {
  if (!value) return <span className="muted">—</span>;
  const date = new Date(value);
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  const [n, unit]: [number, Intl.RelativeTimeFormatUnit] =
    abs < 60
      ? [seconds, "second"]
      : abs < 3600
        ? [Math.round(seconds / 60), "minute"]
        : abs < 86_400
          ? [Math.round(seconds / 3600), "hour"]
          : [Math.round(seconds / 86_400), "day"];
  return (
    <time
      dateTime={value}
      title={`${local.format(date)} (${date.toISOString().replace("T", " ").replace("Z", " UTC")})`}
    >
      {relative.format(n, unit)}
    </time>
  );
}
