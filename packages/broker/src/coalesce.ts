import type { Writable } from "node:stream";

/**
 * amqplib writes every frame to the socket on its own: a publish is three writes (method,
 * header, body) and an ack one more. On this machine a loopback write costs tens of
 * microseconds, and the profile of a loaded dispatcher put those writes at a third of its
 * CPU. Corking the socket at the first write of a tick and uncorking on the next sends all
 * the frames of that tick in one writev.
 */
export function coalesceWrites(stream: Writable): void {
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  let corked = false;
  const uncork = () => {
    corked = false;
    stream.uncork();
  };
  stream.write = ((...args: unknown[]) => {
    if (!corked && !stream.destroyed) {
      corked = true;
      stream.cork();
      process.nextTick(uncork);
    }
    return write(...args);
  }) as Writable["write"];
}
