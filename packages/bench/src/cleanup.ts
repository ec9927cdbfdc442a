import { say } from "./progress.ts";

/**
 * What the run must undo (stop the services, delete the queues, end the load generator), run
 * last first and once: after the run, on an error, or on the first Ctrl-C. `kill` is for process
 * exit, when nothing asynchronous can run any more.
 */
const undo: (() => Promise<void> | void)[] = [];
const killers: (() => void)[] = [];
let cleaning: Promise<void> | null = null;

export function onCleanUp(step: () => Promise<void> | void, kill?: () => void): void {
  undo.push(step);
  if (kill) killers.push(kill);
}

export function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const step of undo.reverse())
      await Promise.resolve()
        .then(step)
        .catch((err) => say(`cleanup: ${err}`));
  })();
  return cleaning;
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (cleaning) return;
    say(`${signal}: stopping everything…`);
    void cleanUp().finally(() => process.exit(130));
  });
}
process.on("exit", () => {
  for (const kill of killers) kill();
});
