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
  // Its own mark and colour: a transformation's cancel is neither a success nor a failure.
  cancelled: "⊘",
  // "‖", not the pause symbol U+23F8, which many system fonts lack (it showed as a box).
  disabled: "‖",
  enabled: "●",
  throttled: "◔",
  paused: "‖",
};

/** What a status means where the word alone may not say it. */
const TITLES: Record<string, string> = {
  cancelled: "The endpoint's transformation cancelled it: nothing was sent.",
};

export function Status({ value }: { value: string }) {
  return (
    <span className={`badge badge-${value}`} data-status={value} title={TITLES[value]}>
      <span aria-hidden="true">{ICONS[value] ?? "•"}</span> {value}
    </span>
  );
}
