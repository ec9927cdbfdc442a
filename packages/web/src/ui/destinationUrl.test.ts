import { parseTarget, redactUserInfo, userInfo } from "@herald/contracts/destinations";
import { describe, expect, it } from "vitest";
import {
  buildDestinationUrl,
  type DestinationFields,
  type DestinationKind,
  destinationProblems,
  EMPTY_FIELDS,
  readDestinationUrl,
  urlType,
} from "./destinationUrl.ts";

const fields = (change: Partial<DestinationFields>): DestinationFields => ({ ...EMPTY_FIELDS, ...change });

/** Each type's fields, the URL built from them, and the target the gateway's grammar reads. */
const CASES: {
  type: DestinationKind;
  f: Partial<DestinationFields>;
  url: string;
  target: Record<string, unknown>;
}[] = [
  {
    type: "amqp",
    f: { host: "mq.example.com", vhost: "shop/eu", exchange: "orders", routingKey: "invoice.paid" },
    url: "amqp://mq.example.com/shop%2Feu?exchange=orders&routing_key=invoice.paid",
    target: { tls: false, port: 5672, vhost: "shop/eu", exchange: "orders", routingKey: "invoice.paid" },
  },
  {
    type: "amqp",
    f: {
      tls: true,
      host: "mq.example.com",
      port: "5999",
      routingKey: "a key&b=c",
      username: "ann",
      password: "p@ss:w/rd%",
    },
    url: "amqps://ann:p%40ss%3Aw%2Frd%25@mq.example.com:5999?routing_key=a%20key%26b%3Dc",
    target: { tls: true, port: 5999, vhost: "/", exchange: "", routingKey: "a key&b=c" },
  },
  {
    type: "nats",
    f: { tls: true, host: "nats.example.com", subject: "orders.paid" },
    url: "tls://nats.example.com?subject=orders.paid",
    target: { tls: true, port: 4222, subject: "orders.paid" },
  },
  {
    type: "redis",
    f: { host: "::1", db: "3", stream: "orders", maxlen: "1000" },
    url: "redis://[::1]/3?stream=orders&maxlen=1000",
    target: { host: "::1", db: 3, stream: "orders", maxlen: 1000 },
  },
  {
    type: "mqtt",
    f: { host: "broker.example.com", topic: "herald/orders é", qos: "2" },
    url: "mqtt://broker.example.com?topic=herald/orders%20%C3%A9&qos=2",
    target: { port: 1883, topic: "herald/orders é", qos: 2 },
  },
  {
    type: "s3",
    f: {
      bucket: "acme-hooks",
      prefix: "in coming/2026/",
      endpoint: "http://127.0.0.1:4568",
      region: "eu-west-1",
      username: "AKIA1",
      password: "se/cr+et",
    },
    url: "s3://AKIA1:se%2Fcr%2Bet@acme-hooks/in%20coming/2026/?endpoint=http://127.0.0.1:4568&region=eu-west-1",
    target: {
      bucket: "acme-hooks",
      prefix: "in coming/2026/",
      endpoint: "http://127.0.0.1:4568",
      region: "eu-west-1",
    },
  },
];

describe("buildDestinationUrl and readDestinationUrl", () => {
  it.each(CASES)(
    "$type: builds $url, which the grammar reads as typed, and reads it back",
    ({ type, f, url, target }) => {
      const built = buildDestinationUrl(type, fields(f));
      expect(built).toBe(url);
      const parsed = new URL(built);
      expect(parseTarget(parsed)).toMatchObject({ type, ...target });
      const typed = fields(f);
      expect(userInfo(parsed)).toEqual(
        typed.username || typed.password ? { username: typed.username, password: typed.password } : null,
      );
      const back = readDestinationUrl(built);
      expect(back?.type).toBe(type);
      // Read back, each field is as typed (the IPv6 host without its brackets).
      expect(buildDestinationUrl(type, back!.fields)).toBe(built);
      for (const [name, value] of Object.entries(f))
        expect(back!.fields[name as keyof DestinationFields]).toBe(value);
    },
  );

  it("reads `[redacted]` user info as saved credentials, and sends `[redacted]` back while both are empty", () => {
    const shown = redactUserInfo(new URL("amqp://guest:guest@mq.example.com/?routing_key=q"));
    expect(shown).toBe("amqp://[redacted]@mq.example.com/?routing_key=q");
    const back = readDestinationUrl(shown)!;
    expect(back.fields).toMatchObject({ saved: true, username: "", password: "", vhost: "" });
    expect(buildDestinationUrl("amqp", back.fields)).toBe("amqp://[redacted]@mq.example.com?routing_key=q");
    expect(userInfo(new URL(buildDestinationUrl("amqp", back.fields)))).toEqual({
      username: "[redacted]",
      password: "",
    });
    // New ones replace them; "remove" sends none.
    expect(buildDestinationUrl("amqp", { ...back.fields, username: "u", password: "p" })).toBe(
      "amqp://u:p@mq.example.com?routing_key=q",
    );
    expect(buildDestinationUrl("amqp", { ...back.fields, removeSaved: true })).toBe(
      "amqp://mq.example.com?routing_key=q",
    );
    // Shown, the password is dots.
    expect(buildDestinationUrl("amqp", { ...back.fields, username: "u", password: "p" }, true)).toBe(
      "amqp://u:••••••@mq.example.com?routing_key=q",
    );
  });

  it("is null for http(s) URLs and what is no destination", () => {
    expect(readDestinationUrl("https://example.com/hook")).toBeNull();
    expect(readDestinationUrl("ftp://example.com")).toBeNull();
    expect(readDestinationUrl("not a url")).toBeNull();
    expect(urlType("https://example.com")).toBe("http");
    expect(urlType("rediss://h?stream=s")).toBe("redis");
    expect(urlType("nope")).toBeNull();
  });
});

describe("destinationProblems", () => {
  it.each([
    [
      "amqp",
      {},
      [
        ["host", "host name"],
        ["routingKey", "exchange, a routing key or both"],
      ],
    ],
    ["amqp", { host: "h", port: "70000", exchange: "x" }, [["port", "from 1 to 65535"]]],
    ["nats", { host: "h" }, [["subject", "subject"]]],
    ["nats", { host: "h", subject: "orders.*" }, [["url", "no wildcards"]]],
    ["redis", { host: "h", stream: "s", db: "16" }, [["url", "from 0 to 15"]]],
    ["mqtt", { host: "h", topic: "a/#" }, [["url", "no wildcards"]]],
    ["s3", { bucket: "Bad_Bucket" }, [["url", "bucket"]]],
    [
      "s3",
      { bucket: "ok-bucket", endpoint: "ftp://x" },
      [["url", "'endpoint' must be an http or https URL"]],
    ],
    ["redis", { host: "h/x", stream: "s" }, [["host", "without a scheme, path or port"]]],
    ["redis", { host: "redis.example.com:6379", stream: "s" }, [["host", "its own field"]]],
    ["redis", { host: "fe80::1", stream: "s" }, []],
    ["mqtt", { host: "h", topic: "$SYS/uptime" }, [["url", "the broker's own"]]],
    ["s3", { bucket: "ok-bucket", prefix: "a/../b/" }, [["prefix", ". or .. segments"]]],
    ["amqp", { host: "h", vhost: "..", exchange: "x" }, [["vhost", "cannot be written in a URL"]]],
    ["mqtt", { host: "h", topic: "t" }, []],
  ] as [DestinationKind, Partial<DestinationFields>, [string, string][]][])(
    "%s %o: %j",
    (type, f, expected) => {
      const problems = destinationProblems(type, fields(f), null);
      expect(problems.map((p) => p.field)).toEqual(expected.map(([field]) => field));
      for (const [i, [, words]] of expected.entries()) expect(problems[i]!.message).toContain(words);
    },
  );

  it("asks for credentials again when saved ones would go to another server", () => {
    const saved = "amqp://[redacted]@mq.example.com/?routing_key=q";
    const back = readDestinationUrl(saved)!.fields;
    expect(destinationProblems("amqp", back, saved)).toEqual([]);
    expect(destinationProblems("amqp", { ...back, routingKey: "other" }, saved)).toEqual([]);
    expect(
      destinationProblems("amqp", { ...back, host: "elsewhere.example.com" }, saved).map((p) => p.field),
    ).toEqual(["username"]);
    expect(
      destinationProblems("amqp", { ...back, host: "elsewhere.example.com", username: "u" }, saved),
    ).toEqual([]);
    expect(destinationProblems("redis", { ...back, stream: "s" }, saved).map((p) => p.field)).toEqual([
      "username",
    ]);
  });
});
