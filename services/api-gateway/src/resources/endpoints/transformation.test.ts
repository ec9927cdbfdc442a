import { type Owner, TransformationError, type TransformPool } from "@herald/transform";
import { describe, expect, it } from "vitest";
import type { Account } from "../../context.ts";
import { ApiError } from "../../http/errors.ts";
import { RateLimiter } from "../../http/rateLimit.ts";
import { checkTransformation, transformationsBusy } from "./transformation.ts";

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
    const err = await refusal(checkTransformation(deps, account, SOURCE));
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
    expect((await refusal(checkTransformation(deps, account, SOURCE))).status).toBe(429);
    expect(compiles).toHaveLength(2);
  });

  it("keeps the code's own failures a 400 transformation_invalid", async () => {
    const { deps } = failing(new TransformationError("syntax", "SyntaxError: oops (line 1)", 1));
    const err = await refusal(checkTransformation(deps, account, SOURCE));
    expect(err.status).toBe(400);
    expect(err.toBody().error).toMatchObject({ code: "transformation_invalid", param: "transformation" });
  });

  it("maps only busy: other errors are not its", () => {
    expect(transformationsBusy(busy())?.status).toBe(429);
    expect(transformationsBusy(new TransformationError("timeout", "x"))).toBeNull();
    expect(transformationsBusy(new Error("busy"))).toBeNull();
  });
});
