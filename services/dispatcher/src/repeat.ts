/**
 * Runs `pass` `intervalMs` after the previous one ended (the first after `firstMs`), never two
 * at once, until stopped; the returned function stops it and waits for a pass under way. A pass
 * handles its own errors.
 */
export function repeat(
  intervalMs: number,
  pass: () => Promise<void>,
  firstMs = intervalMs,
): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const next = (delayMs: number) => {
    timer = setTimeout(() => {
      running = pass().finally(() => {
        if (!stopped) next(intervalMs);
      });
    }, delayMs);
  };
  next(firstMs);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
