import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError, ConfigReader, parseDuration, parseEncryptionKey } from "./config.ts";

describe("config", () => {
  it("parses durations", () => {
    expect(parseDuration("5s")).toBe(5000);
    expect(parseDuration("5m")).toBe(300_000);
    expect(parseDuration("2h")).toBe(7_200_000);
    expect(parseDuration("5d")).toBe(432_000_000);
    expect(parseDuration("250")).toBe(250);
    expect(parseDuration("1.5s")).toBe(1500);
    expect(parseDuration("soon")).toBeNull();
  });

  it("collects every bad variable into one error that names each", () => {
    const r = new ConfigReader({ PORT: "http", FLAG: "maybe", URL: "ftp://x", WAIT: "later" });
    expect(r.int("PORT", 8080, { max: 65535 })).toBe(8080);
    r.bool("FLAG", false);
    r.url("URL", "amqp://localhost", ["amqp:"]);
    r.duration("WAIT", 1000);
    r.required("MISSING", "a hint");
    expect(() => r.done()).toThrow(ConfigError);
    try {
      r.done();
    } catch (err) {
      const problems = (err as ConfigError).problems;
      expect(problems).toHaveLength(5);
      for (const name of ["PORT", "FLAG", "URL", "WAIT", "MISSING"])
        expect(problems.join("\n")).toContain(name);
    }
  });

  it("uses defaults for unset and empty variables", () => {
    const r = new ConfigReader({ EMPTY: "" });
    expect(r.string("EMPTY", "fallback")).toBe("fallback");
    expect(r.int("UNSET", 7)).toBe(7);
    expect(r.bool("UNSET", true)).toBe(true);
    expect(() => r.done()).not.toThrow();
  });

  it("parses 32-byte encryption keys in base64 or hex and nothing else", () => {
    const key = randomBytes(32);
    expect(parseEncryptionKey(key.toString("base64"))).toEqual(key);
    expect(parseEncryptionKey(key.toString("hex"))).toEqual(key);
    expect(parseEncryptionKey(randomBytes(16).toString("base64"))).toBeNull();
    expect(parseEncryptionKey("short")).toBeNull();
    expect(parseEncryptionKey(key.toString("base64url"))).toEqual(key);
    expect(parseEncryptionKey(`${key.toString("base64")}\n`)).toEqual(key);
    // What Node's lenient decoder would have read as some other 32 bytes.
    const b64 = key.toString("base64");
    for (const typo of [
      `${b64.slice(0, 10)}!${b64.slice(11)}`,
      `${b64.slice(0, 20)} ${b64.slice(20)}`,
      `${b64}=`,
    ])
      expect(parseEncryptionKey(typo), typo).toBeNull();
    // The last character carries 2 spare bits, zero in a key's encoding; set, Node reads the same key.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const spare = `${b64.slice(0, 42)}${alphabet[alphabet.indexOf(b64[42]!) + 1]}=`;
    expect(Buffer.from(spare, "base64")).toEqual(key);
    expect(parseEncryptionKey(spare)).toBeNull();
    const r = new ConfigReader({ ENCRYPTION_KEY: "short" });
    r.encryptionKey("a hint");
    expect(r.problems).toEqual(["ENCRYPTION_KEY must be 32 bytes, base64 or hex encoded"]);
    const missing = new ConfigReader({});
    missing.encryptionKey("the gateway's key");
    expect(missing.problems).toEqual(["ENCRYPTION_KEY is required (the gateway's key)"]);
  });

  it("refuses an ATTEMPT_TIMEOUT of nothing", () => {
    const r = new ConfigReader({ ATTEMPT_TIMEOUT: "0.4" });
    r.attemptTimeout();
    expect(r.problems).toEqual(['ATTEMPT_TIMEOUT must be at least 1ms, got "0.4"']);
    expect(new ConfigReader({}).attemptTimeout()).toBe(15_000);
  });

  it("reads LOG_LEVEL as one of pino's levels", () => {
    expect(new ConfigReader({ LOG_LEVEL: "debug" }).logLevel()).toBe("debug");
    expect(new ConfigReader({}).logLevel()).toBe("info");
    const r = new ConfigReader({ LOG_LEVEL: "loud" });
    expect(r.logLevel()).toBe("info");
    expect(r.problems.join()).toContain("LOG_LEVEL must be one of trace, debug, info");
  });
});
