/**
 * A delivery's or attempt's status, or an endpoint's state, as a labelled badge (colour is never
 * the only signal).
 */
const ICONS: Record<string, string> = {
  succeeded: "✓",
  failed: "✕",
  retrying: "↻",
  pending: "…",
  dropped: "–",
  // "‖", not the pause symbol U+23F8, which many system fonts lack (it showed as a box).
  disabled: "‖",
  enabled: "●",
  throttled: "◔",
  paused: "‖",
};

export function Status({ value }: { value: string }) {
  return (
    <span className={`badge badge-${value}`} data-status={value}>
      <span aria-hidden="true">{ICONS[value] ?? "•"}</span> {value}
    </span>
  );
}
