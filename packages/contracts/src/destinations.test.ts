import { describe, expect, it } from "vitest";
import {
  DestinationError,
  destinationOrigin,
  destinationType,
  parseTarget,
  redactUserInfo,
  userInfo,
} from "./destinations.ts";

const target = (url: string) => parseTarget(new URL(url));
const refusal = (url: string) => {
  try {
    parseTarget(new URL(url));
  } catch (err) {
    expect(err).toBeInstanceOf(DestinationError);
    return (err as Error).message;
  }
  throw new Error(`${url} was taken`);
};

describe("destination URLs", () => {
  it("name their type by scheme", () => {
    expect(
      ["https://a.test", "amqps://h", "tls://h", "rediss://h", "mqtts://h", "s3://b"].map((u) =>
        destinationType(new URL(u)),
      ),
    ).toEqual(["http", "amqp", "nats", "redis", "mqtt", "s3"]);
    expect(destinationType(new URL("ftp://h"))).toBeNull();
  });

  it("read each type's parameters", () => {
    expect(target("amqp://u:p@rabbit:5673/prod?exchange=orders&routing_key=invoice.paid")).toEqual({
      type: "amqp",
      tls: false,
      host: "rabbit",
      port: 5673,
      vhost: "prod",
      exchange: "orders",
      routingKey: "invoice.paid",
    });
    expect(target("amqps://rabbit?routing_key=q")).toMatchObject({
      tls: true,
      port: 5671,
      vhost: "/",
      exchange: "",
    });
    expect(target("nats://n?subject=orders.paid")).toEqual({
      type: "nats",
      tls: false,
      host: "n",
      port: 4222,
      subject: "orders.paid",
    });
    expect(target("redis://r/3?stream=orders&maxlen=1000")).toEqual({
      type: "redis",
      tls: false,
      host: "r",
      port: 6379,
      db: 3,
      stream: "orders",
      maxlen: 1000,
    });
    expect(target("mqtts://m?topic=herald/orders&qos=2")).toEqual({
      type: "mqtt",
      tls: true,
      host: "m",
      port: 8883,
      topic: "herald/orders",
      qos: 2,
    });
    expect(target("s3://my-bucket/events/?region=eu-west-1")).toMatchObject({
      bucket: "my-bucket",
      prefix: "events/",
      endpoint: null,
      host: "s3.eu-west-1.amazonaws.com",
      port: 443,
    });
    expect(target("s3://b-1/x?endpoint=http://127.0.0.1:9000")).toMatchObject({
      endpoint: "http://127.0.0.1:9000",
      host: "127.0.0.1",
      port: 9000,
    });
  });

  it("refuse what would not deliver, saying what to fix", () => {
    expect(refusal("amqp://h")).toMatch(/exchange.*routing_key/);
    expect(refusal("nats://h?subject=a.*")).toMatch(/wildcards/);
    expect(refusal("nats://h")).toMatch(/subject/);
    expect(refusal("redis://h/99?stream=s")).toMatch(/0 to 15/);
    expect(refusal("redis://h?stream=s&maxlen=0")).toMatch(/maxlen/);
    expect(refusal("mqtt://h?topic=a/%23")).toMatch(/wildcards/);
    expect(refusal("mqtt://h?topic=t&qos=0")).toMatch(/qos/);
    expect(refusal("mqtt://h?topic=%24SYS/x")).toMatch(/broker's own/);
    expect(refusal("s3://B?")).toMatch(/bucket/);
    expect(refusal("s3://bucket?endpoint=ftp://x")).toMatch(/endpoint/);
    expect(refusal("redis://h?stream=s&stream=t")).toMatch(/twice/);
    expect(refusal("amqp://us%ZZer:pw@h/?exchange=x")).toMatch(/malformed percent-escape/);
    expect(refusal("amqp://h/%ZZ?exchange=x")).toMatch(/malformed percent-escape/);
    expect(refusal("s3://bucket/%E0")).toMatch(/malformed percent-escape/);
    expect(refusal("s3://mybucket/a%2F..%2F..%2Fother%2F?endpoint=http://x")).toMatch(/\.\. segments/);
    expect(refusal("nats://h?subject=s&queue=q")).toMatch(/'queue'/);
  });

  it("keep credentials apart: redacted in the URL, read from user info", () => {
    const url = new URL("amqp://user:p%40ss@rabbit/?exchange=x");
    expect(userInfo(url)).toEqual({ username: "user", password: "p@ss" });
    expect(redactUserInfo(url)).toBe("amqp://[redacted]@rabbit/?exchange=x");
    expect(userInfo(new URL(redactUserInfo(url)))).toEqual({ username: "[redacted]", password: "" });
    expect(redactUserInfo(new URL("nats://n?subject=s"))).toBe("nats://n?subject=s");
  });

  it("tell destinations apart for saved secrets, where URL.origin cannot", () => {
    const o = (u: string) => destinationOrigin(new URL(u));
    expect(new URL("amqp://a").origin).toBe(new URL("amqp://b").origin); // "null": why it cannot serve
    expect(o("amqp://a/?exchange=x")).not.toBe(o("amqp://b/?exchange=x"));
    expect(o("amqp://a/?exchange=x")).toBe(o("amqp://a/?exchange=y"));
    expect(o("s3://b?endpoint=http://x")).not.toBe(o("s3://b?endpoint=http://y"));
    expect(o("s3://b")).not.toBe(o("s3://b?endpoint=http://y"));
    expect(o("https://a.test/x")).toBe(o("https://a.test/y"));
  });
});
