import type { AttemptRequestedV1 } from "@herald/contracts";
import { describe, expect, it } from "vitest";
import { publish } from "./publish.ts";
import { type Transport, TransportError } from "./transports/types.ts";

/**
 * What a destination says is kept as the attempt's response body, cut as an HTTP response body
 * is: a hostile server chooses its receipt (an XADD id, a stream name) and its error replies.
 * The transport here stands in for one whose server answers with a megabyte.
 */
const request = {
  attempt_id: "atmpt_1",
  delivery_id: "dlv_1",
  event_id: "evt_1",
  endpoint_id: "ep_1",
  app_id: "app_1",
  attempt_number: 1,
  url: "redis://redis.test:6379/0?stream=s",
  headers: {},
  secrets: ["x"],
  payload: "{}",
} satisfies AttemptRequestedV1;

function through(send: Transport["send"]) {
  const transport: Transport = { type: "redis", send, close: async () => {} };
  const options = { transports: { of: () => transport }, timeoutMs: 1000, allowPrivate: true };
  return publish(new URL(request.url), request, {}, null, options, 1000);
}

describe("a destination's receipt and refusal, as recorded", () => {
  const megabyte = "x".repeat(1024 * 1024);

  it("keeps the first 4,096 characters of a receipt", async () => {
    const result = await through(async () => ({ detail: `stream s, entry ${megabyte}` }));
    expect(result.succeeded).toBe(true);
    expect(result.response_body?.length).toBe(4097);
    expect(result.response_body?.startsWith("stream s, entry xxx")).toBe(true);
  });

  it("keeps the first 4,096 characters of what the server said in refusing", async () => {
    const result = await through(async () => {
      throw new TransportError("rejected", `ERR ${megabyte}`);
    });
    expect(result).toMatchObject({ succeeded: false, error: "rejected" });
    expect(result.response_body?.length).toBe(4097);
  });
});
