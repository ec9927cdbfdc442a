import { describe, expect, it } from "vitest";
import { isTransientDbError } from "./errors.ts";

const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code });

describe("database errors worth retrying", () => {
  it.each([
    ["deadlock", "40P01"],
    ["serialization failure", "40001"],
    ["lock not available", "55P03"],
    ["admin shutdown", "57P01"],
    ["cannot connect now", "57P03"],
    ["connection failure", "08006"],
    ["too many connections", "53300"],
    ["disk full", "53100"],
  ])("%s (%s) is transient", (_what, code) => {
    expect(isTransientDbError(pgError(code))).toBe(true);
  });

  it.each([
    ["NUL in text", "22021"],
    ["integer out of range", "22003"],
    ["foreign key violation", "23503"],
    ["check violation", "23514"],
    ["syntax error (a bug)", "42601"],
  ])("%s (%s) is not", (_what, code) => {
    expect(isTransientDbError(pgError(code))).toBe(false);
  });

  it("counts a prepared statement that no longer fits the database as transient, and other 0A000 not", () => {
    const stale = Object.assign(new Error("cached plan must not change result type"), { code: "0A000" });
    expect(isTransientDbError(stale)).toBe(true);
    expect(isTransientDbError(pgError("26000")), "statement unknown to the connection").toBe(true);
    expect(isTransientDbError(pgError("42P05")), "name taken on the connection").toBe(true);
    expect(isTransientDbError(pgError("0A000")), "a feature not supported").toBe(false);
  });

  it("counts a lost connection as transient, and a plain bug as not", () => {
    expect(isTransientDbError(Object.assign(new Error("connect"), { code: "ECONNREFUSED" }))).toBe(true);
    expect(isTransientDbError(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isTransientDbError(new Error("timeout exceeded when trying to connect"))).toBe(true);
    expect(isTransientDbError(new TypeError("Cannot read properties of undefined"))).toBe(false);
    expect(isTransientDbError(null)).toBe(false);
  });
});
