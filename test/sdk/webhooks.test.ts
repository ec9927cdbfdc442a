import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  HeraldError,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
} from "../../packages/sdk/src/index.ts";

// The Standard Webhooks specification's example, checked against the standardwebhooks package.
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
const vectorHeaders = {
  "webhook-id": VECTOR.id,
  "webhook-timestamp": String(VECTOR.timestamp),
  "webhook-signature": VECTOR.signature,
};

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
const now = () => Math.floor(Date.now() / 1000);
const payload = JSON.stringify({ type: "invoice.paid", timestamp: new Date().toISOString(), data: { n: 1 } });

function failure(fn: () => unknown): WebhookVerificationError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return err as WebhookVerificationError;
  }
  throw new Error("expected a WebhookVerificationError");
}

describe("verifyWebhook", () => {
  it("agrees with the specification's test vector", () => {
    const reference = new Webhook(VECTOR.secret).sign(
      VECTOR.id,
      new Date(VECTOR.timestamp * 1000),
      VECTOR.body,
    );
    expect(reference).toBe(VECTOR.signature);
    expect(signWebhook(VECTOR.secret, VECTOR)).toBe(VECTOR.signature);
    expect(verifyWebhook(VECTOR.secret, vectorHeaders, VECTOR.body, { now: VECTOR.timestamp + 10 })).toEqual({
      test: 2432232314,
    });
  });

  it("verifies what the standardwebhooks package signs, and the other way round", () => {
    const secret = newSecret();
    const reference = new Webhook(secret);
    const ts = new Date();
    const headers = {
      "webhook-id": "evt_1",
      "webhook-timestamp": String(Math.floor(ts.getTime() / 1000)),
      "webhook-signature": reference.sign("evt_1", ts, payload),
    };
    expect(verifyWebhook(secret, headers, payload)).toEqual(JSON.parse(payload));
    const ours = {
      ...headers,
      "webhook-signature": signWebhook(secret, { id: "evt_1", timestamp: ts, body: payload }),
    };
    expect(reference.verify(payload, ours)).toEqual(JSON.parse(payload));
  });

  it("takes headers as a plain object in any case, a Headers, or Node's with arrays; the body as text or bytes", () => {
    const secret = newSecret();
    const ts = now();
    const signature = signWebhook(secret, { id: "evt_2", timestamp: ts, body: payload });
    const parsed = JSON.parse(payload);
    const shouting = {
      "Webhook-Id": "evt_2",
      "WEBHOOK-TIMESTAMP": String(ts),
      "Webhook-Signature": signature,
    };
    expect(verifyWebhook(secret, shouting, payload)).toEqual(parsed);
    expect(verifyWebhook(secret, new Headers(shouting), Buffer.from(payload))).toEqual(parsed);
    const node = { "webhook-id": "evt_2", "webhook-timestamp": String(ts), "webhook-signature": [signature] };
    expect(verifyWebhook(secret, node, new TextEncoder().encode(payload))).toEqual(parsed);
  });

  it("accepts any matching v1 signature of several, as during a rotation, and ignores other versions", () => {
    const [oldSecret, rotated] = [newSecret(), newSecret()];
    const ts = now();
    const sign = (s: string) => signWebhook(s, { id: "evt_3", timestamp: ts, body: payload });
    const header = `v1a,${sign(rotated).slice(3)} ${sign(rotated)} ${sign(oldSecret)}`;
    const headers = { "webhook-id": "evt_3", "webhook-timestamp": String(ts), "webhook-signature": header };
    expect(verifyWebhook(oldSecret, headers, payload)).toEqual(JSON.parse(payload));
    expect(verifyWebhook(rotated, headers, payload)).toEqual(JSON.parse(payload));
    expect(failure(() => verifyWebhook(newSecret(), headers, payload)).reason).toBe("no_matching_signature");
    const onlyV1a = { ...headers, "webhook-signature": `v1a,${sign(oldSecret).slice(3)}` };
    expect(failure(() => verifyWebhook(oldSecret, onlyV1a, payload)).reason).toBe("no_matching_signature");
  });

  it("refuses a changed body, id or timestamp, a signature with more after it, and a missing header", () => {
    const secret = newSecret();
    const ts = now();
    const signature = signWebhook(secret, { id: "evt_4", timestamp: ts, body: payload });
    const headers = {
      "webhook-id": "evt_4",
      "webhook-timestamp": String(ts),
      "webhook-signature": signature,
    };
    expect(failure(() => verifyWebhook(secret, headers, `${payload} `)).reason).toBe("no_matching_signature");
    expect(failure(() => verifyWebhook(secret, { ...headers, "webhook-id": "evt_5" }, payload)).reason).toBe(
      "no_matching_signature",
    );
    const later = { ...headers, "webhook-timestamp": String(ts + 1) };
    expect(failure(() => verifyWebhook(secret, later, payload)).reason).toBe("no_matching_signature");
    const longer = { ...headers, "webhook-signature": `${signature},x` };
    expect(failure(() => verifyWebhook(secret, longer, payload)).reason).toBe("no_matching_signature");
    for (const name of Object.keys(headers)) {
      const without = Object.fromEntries(Object.entries(headers).filter(([k]) => k !== name));
      const err = failure(() => verifyWebhook(secret, without, payload));
      expect(err.reason).toBe("missing_header");
      expect(err.message).toContain(name);
    }
  });

  it("refuses a timestamp more than 5 minutes away either way, or not a number", () => {
    const secret = newSecret();
    const at = (ts: number, raw = String(ts)) => ({
      "webhook-id": "evt_6",
      "webhook-timestamp": raw,
      "webhook-signature": signWebhook(secret, { id: "evt_6", timestamp: ts, body: payload }),
    });
    const t = now();
    expect(verifyWebhook(secret, at(t - 299), payload)).toBeTruthy();
    expect(verifyWebhook(secret, at(t + 299), payload)).toBeTruthy();
    expect(failure(() => verifyWebhook(secret, at(t - 301), payload)).reason).toBe("timestamp_too_old");
    expect(failure(() => verifyWebhook(secret, at(t + 301), payload)).reason).toBe("timestamp_too_new");
    expect(failure(() => verifyWebhook(secret, at(t, "soon"), payload)).reason).toBe("invalid_timestamp");
    expect(verifyWebhook(secret, at(t - 3600), payload, { toleranceSeconds: 7200 })).toBeTruthy();
    // Also the reference package refuses what is too old.
    expect(() => new Webhook(secret).verify(payload, at(t - 301))).toThrow(/too old/);
  });

  it("says an empty secret is the receiver's mistake, not a bad webhook", () => {
    let thrown: unknown;
    try {
      verifyWebhook("whsec_", vectorHeaders, VECTOR.body);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(HeraldError);
    expect(thrown).not.toBeInstanceOf(WebhookVerificationError);
  });
});
