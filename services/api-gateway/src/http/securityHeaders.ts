import type { NextFunction, Request, Response } from "express";

/**
 * Headers on every response: no MIME sniffing, no referrer (a page's URL never leaks to a
 * link it opens), no framing. Pages served by the gateway add a strict Content-Security-Policy.
 */
export function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.set({
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
  });
  next();
}

/** For an HTML page with its styles inline and nothing loaded from elsewhere. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
