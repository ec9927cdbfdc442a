import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { sign, signatureHeader } from "./sign.ts";

describe("Standard Webhooks signatures", () => {
  it("match the specification's reference vector", () => {
    expect(
      sign(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("verify with the standardwebhooks package, on either secret during a rotation", () => {
    const oldSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const newSecret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    const body = JSON.stringify({
      type: "invoice.paid",
      timestamp: "2026-11-21T10:00:00.000Z",
      data: { a: 1 },
    });
    const ts = Math.floor(Date.now() / 1000);
    const header = signatureHeader([newSecret, oldSecret], "evt_1", ts, body);
    expect(header.split(" ")).toHaveLength(2);
    const headers = { "webhook-id": "evt_1", "webhook-timestamp": String(ts), "webhook-signature": header };
    for (const secret of [oldSecret, newSecret])
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 9).toString("base64")}`).verify(body, headers),
    ).toThrow();
    expect(() => new Webhook(oldSecret).verify(`${body} `, headers)).toThrow();
  });
});
