import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { type Owner, TransformationError, type TransformPool } from "@herald/transform";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Account } from "../../context.ts";
import { ApiError } from "../../http/errors.ts";
import { RateLimiter } from "../../http/rateLimit.ts";
import {
  checkTransformation,
  TRANSFORMATION_WAIT_MS,
  takeTransformationTurn,
  transformationsBusy,
} from "./transformation.ts";

/**
 * What a save makes of the transformation workers' refusals: the code's failure is a 400, their
 * being too busy (a full queue: hard to bring about through the API) a 429 to retry.
 */
const account: Account = { id: "acct_1", keyId: "key_1", via: "key" };
const SOURCE = "function handler(webhook) { return webhook; }";
// "busy" through a string: the cause is newer than some builds of @herald/transform.
const busy = () => new TransformationError("busy", "queue full");

/** Deps whose workers fail every compile with `errors` in turn (the last again), counting them. */
function failing(...errors: Error[]) {
  const compiles: Owner[] = [];
  const transforms = {
    async compile(owner: Owner) {
      compiles.push(owner);
      throw errors[Math.min(compiles.length, errors.length) - 1];
    },
  } as unknown as TransformPool;
  return { deps: { transforms, transformLimiter: new RateLimiter(0) }, compiles };
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe("saving a transformation the workers refuse", () => {
  it("answers workers too busy with 429 transformation_busy at transformation, Retry-After 1, tried once", async () => {
    const { deps, compiles } = failing(busy());
    const err = await refusal(checkTransformation(deps, account, {}, SOURCE));
    expect(err.status).toBe(429);
    expect(err.toBody().error).toMatchObject({
      type: "rate_limit_error",
      code: "transformation_busy",
      param: "transformation",
    });
    expect(err.headers).toEqual({ "Retry-After": "1" });
    expect(compiles).toEqual([{ account: "acct_1", owner: "acct_1" }]);
  });

  it("answers busy on the second try of a compile that ran past its budget the same way", async () => {
    const { deps, compiles } = failing(new TransformationError("timeout", "past its budget"), busy());
    expect((await refusal(checkTransformation(deps, account, {}, SOURCE))).status).toBe(429);
    expect(compiles).toHaveLength(2);
  });

  it("keeps the code's own failures a 400 transformation_invalid", async () => {
    const { deps } = failing(new TransformationError("syntax", "SyntaxError: oops (line 1)", 1));
    const err = await refusal(checkTransformation(deps, account, {}, SOURCE));
    expect(err.status).toBe(400);
    expect(err.toBody().error).toMatchObject({ code: "transformation_invalid", param: "transformation" });
  });

  it("maps only busy: other errors are not its", () => {
    expect(transformationsBusy(busy())?.status).toBe(429);
    expect(transformationsBusy(new TransformationError("timeout", "x"))).toBeNull();
    expect(transformationsBusy(new Error("busy"))).toBeNull();
  });
});

/**
 * Deps whose workers never free up: each compile waits until its signal ends, then is refused
 * as the pool refuses a job whose caller's deadline ended while it waited.
 */
function neverFree() {
  const signals: AbortSignal[] = [];
  const transforms = {
    compile(_owner: Owner, _source: string, signal?: AbortSignal) {
      if (!signal) throw new Error("compiled without a deadline");
      signals.push(signal);
      if (signal.aborted) return Promise.reject(busy());
      return new Promise((_resolve, reject) =>
        signal.addEventListener("abort", () => reject(busy()), { once: true }),
      );
    },
  } as unknown as TransformPool;
  return { deps: { transforms, transformLimiter: new RateLimiter(0) }, signals };
}

/** A response as requestDeadline sees it: `close` before it is finished is the client leaving. */
function response(): ServerResponse {
  return Object.assign(new EventEmitter(), { writableFinished: false, destroyed: false }) as never;
}

describe("a save's wait for a worker", () => {
  afterEach(() => vi.useRealTimers());

  it("ends after TRANSFORMATION_WAIT_MS as 429 transformation_busy", async () => {
    vi.useFakeTimers();
    const { deps, signals } = neverFree();
    const saving = refusal(checkTransformation(deps, account, {}, SOURCE));
    await vi.advanceTimersByTimeAsync(TRANSFORMATION_WAIT_MS - 1);
    expect(signals[0]!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect((await saving).toBody().error.code).toBe("transformation_busy");
  });

  it("ends when the client closes the connection before its answer, and lets go of it after", async () => {
    const { deps, signals } = neverFree();
    const res = response();
    const saving = refusal(checkTransformation(deps, account, { res }, SOURCE));
    res.emit("close");
    expect((await saving).status).toBe(429);
    expect((signals[0]!.reason as DOMException).name).toBe("AbortError");
    // Done with it: the response's own close, once answered, has nothing of the save's left.
    expect(res.listenerCount("close")).toBe(0);
  });

  it("is refused at once when the client has left already", async () => {
    const { deps, signals } = neverFree();
    const res = Object.assign(response(), { destroyed: true });
    expect((await refusal(checkTransformation(deps, account, { res }, SOURCE))).status).toBe(429);
    expect(signals[0]!.aborted).toBe(true);
  });
});

describe("the rate of a portal session's compiles and try-its", () => {
  const session = (id: string): Account => ({
    id: "acct_1",
    keyId: "key_1",
    via: "portal",
    appId: "app_1",
    session: { id, expiresAt: new Date(Date.now() + 3_600_000), keyId: "key_1" },
  });
  const turn = (deps: { transformLimiter: RateLimiter }, who: Account) => () =>
    takeTransformationTurn(deps, who);

  it("takes its account's tokens too: a new session brings no fresh allowance", () => {
    // 1 a second, bursts of 2.
    const deps = { transformLimiter: new RateLimiter(1) };
    turn(deps, session("ps_1"))();
    turn(deps, session("ps_1"))();
    const limited = expect.objectContaining({ status: 429, param: "transformation" });
    expect(turn(deps, session("ps_2"))).toThrow(limited);
    expect(turn(deps, account)).toThrow(limited);
  });
});
