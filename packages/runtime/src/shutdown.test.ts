import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError } from "./config.ts";
import { EXIT_CONFIG, onShutdown, onStartFailure } from "./shutdown.ts";

function capture() {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { logger: pino(stream), lines };
}

describe("a start that fails", () => {
  const signals = ["SIGTERM", "SIGINT"] as const;
  const before = signals.map((s) => process.listeners(s));
  afterEach(() => {
    vi.restoreAllMocks();
    // onShutdown listens for signals; only the test's own listeners go.
    signals.forEach((s, i) => {
      for (const l of process.listeners(s)) if (!before[i]?.includes(l)) process.off(s, l);
    });
  });

  it("exits 1 on its own, naming the error, and 78 (EX_CONFIG) for its configuration", () => {
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never);
    const { logger, lines } = capture();
    onStartFailure(logger, "sender", new Error("no such host"), onShutdown(logger, []));
    expect(exit).toHaveBeenLastCalledWith(1);
    expect(lines.at(-1)).toMatchObject({ level: 60, msg: "sender failed to start" });

    onStartFailure(logger, "sender", new ConfigError(["PORT: not a number"]));
    expect(exit).toHaveBeenLastCalledWith(EXIT_CONFIG);
    expect(lines.at(-1)?.msg).toContain("PORT: not a number");
  });

  it("lets the shutdown finish when a signal cut the start short", async () => {
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never);
    const { logger, lines } = capture();
    let closed = false;
    const shutdown = onShutdown(logger, [
      {
        name: "broker",
        close: () => {
          closed = true;
        },
      },
    ]);
    const stopping = shutdown.run();
    onStartFailure(logger, "dispatcher", new Error("Channel ended, no reply will be forthcoming"), shutdown);
    await stopping;
    expect(closed).toBe(true);
    expect(exit).not.toHaveBeenCalled();
    expect(lines.map((l) => l.msg)).toContain("dispatcher stopped while starting");
  });
});
