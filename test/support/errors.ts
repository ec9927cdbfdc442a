import { expect } from "vitest";
import type { Response } from "./gateway.ts";
import { expectMatches } from "./openapi.ts";

/** Checks of the API's error format, shared by the error-table tests. */
export const MIB = 1024 * 1024;

/** No stack frames, file paths or source locations anywhere in an error body. */
export function expectNoLeak(res: Response): void {
  const text = typeof res.body === "string" ? res.body : JSON.stringify(res.body);
  expect(text).not.toMatch(/\bat\s+\S+\s+\(/); // "at fn (file:1:2)"
  expect(text).not.toMatch(/\bat\s+(file:|node:|\/)/); // "at /abs/path", "at node:internal"
  expect(text).not.toMatch(/(\\n|\n)\s*at\s/); // a multi-line stack
  expect(text).not.toMatch(/\.(ts|js|mjs|cjs):\d+/); // file.ts:12
  expect(text).not.toMatch(/node_modules|file:\/\/|node:internal|\/work\/|\/src\//);
  expect(text).not.toMatch(/"stack"/);
}

export type Expected = { type: string; code: string; param?: string | null };

/** `param: null` means the error must name no param. */
export function expectError(res: Response, status: number, expected: Expected): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expectMatches(res.body, "Error");
  expect(res.body.error.type).toBe(expected.type);
  expect(res.body.error.code).toBe(expected.code);
  expect(typeof res.body.error.message).toBe("string");
  expect(res.body.error.message.length).toBeGreaterThan(0);
  if (expected.param === null) expect(res.body.error).not.toHaveProperty("param");
  else if (expected.param !== undefined) expect(res.body.error.param).toBe(expected.param);
  expectNoLeak(res);
}

export const invalidRequest = (code: string, param?: string | null): Expected => ({
  type: "invalid_request_error",
  code,
  param,
});
