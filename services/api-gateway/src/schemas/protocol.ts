import type { Violation } from "./budget.ts";

/** What the gateway asks a schema worker (worker.ts), and what it answers. */
export type WorkerRequest =
  | { id: number; op: "check"; schema: unknown }
  | { id: number; op: "validate"; key: string; schema?: unknown; data: unknown };

export type CheckReply = { op: "check"; problems: Violation[]; example: unknown };
export type ValidateReply = {
  op: "validate";
  /** The schema's own problems, found when compiling it: no event of its type can be checked. */
  schemaProblems: Violation[];
  violations: Violation[];
  /** Violations beyond those listed. */
  more: number;
};
/** The worker no longer holds the validator of `key`: ask again with the schema. */
export type MissingReply = { op: "validate"; missing: true };

export type WorkerReply = { id: number; warnings: string[]; warningsMore: number } & (
  | CheckReply
  | ValidateReply
  | MissingReply
);

export type WorkerSettings = { cacheBytes: number };

/** Violations listed in one answer; the rest are counted. */
export const VIOLATIONS_SHOWN = 20;
/** A schema's problems listed in one answer; the rest are counted. */
export const PROBLEMS_SHOWN = 50;
/** Warnings passed on per answer, each cut to WARNING_CHARS. */
export const WARNINGS_SHOWN = 5;
export const WARNING_CHARS = 300;
