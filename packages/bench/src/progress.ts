import type { OnProgress } from "./loadProcess.ts";
import type { Phase } from "./protocol.ts";

const tty = process.stdout.isTTY === true;
let open = false;

/** A line of the benchmark's own, clearing a progress line in the way. */
export function say(line: string): void {
  if (open) process.stdout.write("\r\x1b[K");
  open = false;
  console.log(`\x1b[36m[bench]\x1b[0m ${line}`);
}

/**
 * Progress of one step: on a terminal one line rewritten each second (`phase, N s left`);
 * otherwise (a log, a test) one line per phase.
 */
export function progress(step: string): OnProgress {
  let last: Phase | null = null;
  return (phase, secondsLeft) => {
    if (tty) {
      process.stdout.write(`\r\x1b[K\x1b[36m[bench]\x1b[0m ${step}: ${phase}, ${secondsLeft} s left`);
      open = true;
    } else if (phase !== last) {
      say(`${step}: ${phase}${phase === "drain" ? ` (at most ${secondsLeft} s)` : ` (${secondsLeft} s)`}`);
    }
    last = phase;
  };
}
