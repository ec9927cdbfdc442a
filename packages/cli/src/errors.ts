import {
  HeraldAbortError,
  HeraldApiError,
  HeraldAuthenticationError,
  HeraldConnectionError,
  HeraldNotFoundError,
  HeraldPermissionError,
} from "@herald/sdk";
import { clean } from "./output.ts";

/**
 * The CLI's exit codes, for scripts:
 *   0  done
 *   1  the API refused or failed the request, or the work failed
 *   2  usage: an unknown command or flag, a bad value, no API key
 *   3  authentication: the API key is invalid, revoked, or not allowed this
 *   4  not found: no such app, endpoint, event…
 *   5  unreachable: the gateway did not answer
 *   6  `herald replay`: done, and some replayed deliveries failed again
 *   130  interrupted (Ctrl-C) while waiting; `listen` and `tail` stop with 0
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  unreachable: 5,
  replayFailures: 6,
  interrupted: 130,
} as const;

/** A command used wrongly: the message says how to use it. */
export class UsageError extends Error {}

/** The work failed in a way the message explains fully; `code` is the exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: number = EXIT.failed,
  ) {
    super(message);
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof CliError) return err.code;
  if (err instanceof HeraldAbortError) return EXIT.interrupted;
  if (err instanceof HeraldAuthenticationError || err instanceof HeraldPermissionError) return EXIT.auth;
  if (err instanceof HeraldNotFoundError) return EXIT.notFound;
  if (err instanceof HeraldConnectionError) return EXIT.unreachable;
  return EXIT.failed;
}

/** One line (two with a hint) for people, on stderr; the server's words made safe to print. */
export function describeError(err: unknown): string {
  return clean(describe(err));
}

function describe(err: unknown): string {
  if (err instanceof HeraldApiError) {
    const where = err.param ? ` (param: ${err.param})` : "";
    const details = (err.details ?? [])
      .map((d) => `\n  ${d.path ?? ""} ${d.message ?? ""}`.trimEnd())
      .join("");
    const request = err.requestId
      ? `\n  request ${err.requestId}, status ${err.status}, code ${err.code}`
      : "";
    const scope = err instanceof HeraldPermissionError ? err.requiredScope : undefined;
    const hint =
      err instanceof HeraldAuthenticationError
        ? "\n  Check the key: `herald login`, HERALD_API_KEY or --api-key."
        : scope
          ? `\n  Use a key that holds '${scope}' (\`herald keys create --scope ${scope}\` with a key that has it).`
          : "";
    return `error: ${err.message}${where}${details}${request}${hint}`;
  }
  if (err instanceof HeraldConnectionError)
    return `error: ${err.message}\n  Is the gateway running there? Set it with --url, HERALD_URL or \`herald login --url\`.`;
  if (err instanceof UsageError) return `error: ${err.message}\n  See \`herald --help\`.`;
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

/** The error as JSON, for `--json`: the API's error object and the status and request id. */
export function errorJson(err: unknown): Record<string, unknown> {
  if (err instanceof HeraldApiError)
    return {
      error: {
        type: err.type,
        code: err.code,
        message: err.message,
        ...(err.param ? { param: err.param } : {}),
        ...(err.details ? { details: err.details } : {}),
        status: err.status,
        request_id: err.requestId,
      },
    };
  const type =
    err instanceof UsageError
      ? "usage_error"
      : err instanceof HeraldConnectionError
        ? "connection_error"
        : "cli_error";
  return { error: { type, message: err instanceof Error ? err.message : String(err) } };
}
