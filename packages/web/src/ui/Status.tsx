/** A delivery's or attempt's status as a labelled badge (colour is never the only signal). */
const ICONS: Record<string, string> = {
  succeeded: "✓",
  failed: "✕",
  retrying: "↻",
  pending: "…",
  dropped: "–",
  disabled: "⏸",
  enabled: "●",
};

export function Status({ value }: { value: string }) {
  return (
    <span className={`badge badge-${value}`} data-status={value}>
      <span aria-hidden="true">{ICONS[value] ?? "•"}</span> {value}
    </span>
  );
}
