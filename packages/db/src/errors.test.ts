import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable, isTransientDbError } from "./errors.ts";

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

  it("looks at what an error wraps: a publish that failed because the database went away", () => {
    const wrapped = new Error("3 attempt(s) not published", { cause: pgError("57P01") });
    expect(isTransientDbError(wrapped)).toBe(true);
    expect(isTransientDbError(new Error("not published", { cause: pgError("23503") }))).toBe(false);
  });

  it("counts a lost connection as transient, and a plain bug as not", () => {
    expect(isTransientDbError(Object.assign(new Error("connect"), { code: "ECONNREFUSED" }))).toBe(true);
    expect(isTransientDbError(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isTransientDbError(new Error("Connection terminated due to connection timeout"))).toBe(true);
    expect(isTransientDbError(new TypeError("Cannot read properties of undefined"))).toBe(false);
    expect(isTransientDbError(null)).toBe(false);
  });
});

describe("the database away, as opposed to a statement refused", () => {
  it("is a lost or refused connection, a shutdown, or too many connections", () => {
    for (const code of ["57P01", "57P03", "08006", "53300"])
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("connect"), { code: "ECONNREFUSED" }))).toBe(true);
    expect(isDatabaseUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
  });

  it("is a socket to it refused, reset, timed out, broken or not found", () => {
    for (const code of ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "EAI_AGAIN"])
      expect(isDatabaseUnavailable(Object.assign(new Error(code), { code })), code).toBe(true);
  });

  it("is not a conflict between writers, a bug, load, or another kind of failure", () => {
    for (const code of ["40P01", "40001", "55P03", "23503", "42601", "P0001", "08P01", "53100"])
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(false);
    for (const code of ["ECONNABORTED", "EMFILE", "EACCES", "P2024", "P1008"])
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(false);
    expect(isDatabaseUnavailable(new TypeError("x is undefined"))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });

  it("looks through what Prisma and others wrap: the adapter's error, its kind, a cause", () => {
    const prisma = (code: string, kind?: string) =>
      Object.assign(new Error("Invalid `prisma.app.findMany()` invocation"), {
        code,
        meta: kind ? { driverAdapterError: Object.assign(new Error(kind), { cause: { kind } }) } : {},
      });
    expect(isDatabaseUnavailable(prisma("P1001"))).toBe(true);
    expect(isDatabaseUnavailable(prisma("P2010", "ConnectionClosed"))).toBe(true);
    expect(isDatabaseUnavailable(prisma("P2002", "UniqueConstraintViolation"))).toBe(false);
    const wrapped = new Error("outer", { cause: pgError("57P01") });
    expect(isDatabaseUnavailable(wrapped)).toBe(true);
    const loop: { cause?: unknown } = new Error("self");
    loop.cause = loop;
    expect(isDatabaseUnavailable(loop)).toBe(false);
  });
});
