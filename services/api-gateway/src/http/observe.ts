import { randomBytes } from "node:crypto";
import {
  Counter,
  context,
  contextFrom,
  Histogram,
  type Registry,
  SpanKind,
  SpanStatusCode,
  trace,
  tracer,
} from "@herald/runtime";
import type { NextFunction, Request, RequestHandler, Response } from "express";

/** `/v3/apps/:app` → `/v3/apps/{app}`: the route as the API reference names it. */
function routeOf(req: Request): string {
  const path = (req.route as { path?: string } | undefined)?.path;
  return path ? path.replace(/:(\w+)/g, "{$1}") : "unmatched";
}

/**
 * One SERVER span per request (continuing a caller's `traceparent`, if sent), with the HTTP
 * semantic conventions, and the request metrics by route and status. Handlers run inside
 * the span, so what they publish and log joins its trace.
 */
export function observeRequests(registry: Registry): RequestHandler {
  const requests = new Counter({
    name: "herald_http_requests_total",
    help: "API requests by route and status",
    labelNames: ["method", "route", "status"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "herald_http_request_duration_seconds",
    help: "API request duration",
    labelNames: ["method", "route"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const parent = contextFrom(req.headers);
    const span = tracer().startSpan(
      req.method,
      {
        kind: SpanKind.SERVER,
        attributes: { "http.request.method": req.method, "url.path": req.path, "url.scheme": req.protocol },
      },
      parent,
    );
    // Every answer names its request: the SDK's errors carry it, and the span has it to search by.
    const requestId = `req_${randomBytes(12).toString("hex")}`;
    res.setHeader("Request-Id", requestId);
    span.setAttribute("herald.request_id", requestId);
    const started = performance.now();
    res.once("finish", () => {
      const route = routeOf(req);
      span.updateName(`${req.method} ${route}`);
      span.setAttributes({ "http.route": route, "http.response.status_code": res.statusCode });
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      requests.inc({ method: req.method, route, status: res.statusCode });
      duration.observe({ method: req.method, route }, (performance.now() - started) / 1000);
    });
    context.with(trace.setSpan(parent, span), next);
  };
}
