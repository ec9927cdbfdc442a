import { REQUEST_BODY_MAX_BYTES } from "@herald/contracts";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { ApiError } from "./errors.ts";

/**
 * Bodies are JSON or form-encoded, with the same meaning. Forms carry arrays as
 * `name[]=a&name[]=b`, maps as `headers[X-Foo]=bar`, and JSON-valued fields (`data`,
 * `schema`) as JSON strings. Any other content type on a body is a 415.
 */
export const BODY_LIMIT_BYTES = REQUEST_BODY_MAX_BYTES;

declare global {
  namespace Express {
    interface Request {
      /** True when the body came form-encoded: its values are strings to coerce. */
      isForm?: boolean;
      /** A JSON body's bytes as received, for checks cheaper on the text than on the parsed value. */
      rawJson?: Buffer;
    }
  }
}

const json = express.json({
  limit: BODY_LIMIT_BYTES,
  strict: false,
  type: "application/json",
  // The bytes are the text only in UTF-8: in UTF-16 a `\u` escape is other bytes.
  verify: (req, _res, buf, encoding) => {
    if (/^utf-?8$/i.test(encoding)) (req as Request).rawJson = buf;
  },
});
const form = express.urlencoded({ limit: BODY_LIMIT_BYTES, extended: true, parameterLimit: 10_000 });

function hasBody(req: Request): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

export function parseBody(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) {
      req.body = {};
      return next();
    }
    if (req.is("application/json")) {
      return json(req, res, (err?: unknown) => {
        if (err) return next(err);
        if (typeof req.body !== "object" || req.body === null || Array.isArray(req.body)) {
          return next(
            new ApiError(
              400,
              "invalid_request_error",
              "invalid_body",
              "The request body must be a JSON object.",
            ),
          );
        }
        next();
      });
    }
    if (req.is("application/x-www-form-urlencoded")) {
      req.isForm = true;
      return form(req, res, next);
    }
    next(
      new ApiError(
        415,
        "invalid_request_error",
        "unsupported_media_type",
        `Unsupported content type '${req.headers["content-type"] ?? ""}'. Send application/json or application/x-www-form-urlencoded.`,
      ),
    );
  };
}

/** In a form body, a JSON-valued field arrives as a string: parse it, or name it in a 400. */
export function parseFormJson(body: Record<string, unknown>, fields: readonly string[]): void {
  for (const field of fields) {
    const value = body[field];
    if (typeof value !== "string") continue;
    try {
      body[field] = JSON.parse(value);
    } catch {
      throw new ApiError(
        400,
        "invalid_request_error",
        "parameter_invalid",
        `${field} must be a JSON string in a form body.`,
        field,
      );
    }
  }
}

/** Maps body-parser's errors to the API's: 413 over the limit, 400 bad JSON, 415 bad charset. */
export function bodyParserError(err: unknown): ApiError | null {
  const type = (err as { type?: string }).type;
  switch (type) {
    case "entity.too.large":
      return new ApiError(
        413,
        "invalid_request_error",
        "body_too_large",
        `The request body is over ${BODY_LIMIT_BYTES} bytes.`,
      );
    case "entity.parse.failed":
      return new ApiError(
        400,
        "invalid_request_error",
        "invalid_json",
        "The request body is not valid JSON.",
      );
    case "charset.unsupported":
    case "encoding.unsupported":
      return new ApiError(415, "invalid_request_error", "unsupported_media_type", (err as Error).message);
    case "request.aborted":
    case "request.size.invalid":
      return new ApiError(
        400,
        "invalid_request_error",
        "malformed_request",
        "The request body ended before its Content-Length.",
      );
    case "parameters.too.many":
      return new ApiError(
        413,
        "invalid_request_error",
        "body_too_large",
        "The form body has too many parameters.",
      );
    default:
      return null;
  }
}
