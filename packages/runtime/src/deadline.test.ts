import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { deadline } from "./deadline.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/**
 * Whether what a listener holds is collected after `use` made a signal, listened on it as got
 * does (a listener that would end the request, never removed once it is read) and let go.
 */
async function collected(use: (listener: () => void) => void): Promise<boolean> {
  let held: WeakRef<object>;
  {
    const request = { buffers: new Array(1000).fill("x") };
    held = new WeakRef(request);
    use(() => request.buffers.length);
  }
  for (let i = 0; i < 5 && held.deref(); i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  return held.deref() === undefined;
}

describe("deadline", () => {
  it("aborts with a TimeoutError when its time has passed", async () => {
    const { signal } = deadline(10);
    await new Promise((resolve) => signal.addEventListener("abort", resolve));
    expect((signal.reason as DOMException).name).toBe("TimeoutError");
  });

  it("never aborts once cleared", async () => {
    const limit = deadline(10);
    limit.clear();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(limit.signal.aborted).toBe(false);
  });

  it("lets what its listeners hold be collected once cleared, where AbortSignal.timeout keeps it", async () => {
    const cleared = await collected((listener) => {
      const limit = deadline(60_000);
      limit.signal.addEventListener("abort", listener);
      limit.clear();
    });
    expect(cleared).toBe(true);
    // The control: Node keeps a timeout signal with a listener alive until it fires.
    const kept = await collected((listener) =>
      AbortSignal.timeout(60_000).addEventListener("abort", listener),
    );
    expect(kept).toBe(false);
  });
});
