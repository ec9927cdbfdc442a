import type { ErrorKind } from "@herald/contracts";

/**
 * Why an attempt failed, from the error of the request: every failure gets a kind a person
 * can act on (their meanings: @herald/contracts' ERROR_KINDS).
 */
export function errorKind(err: unknown): ErrorKind {
  const code = (err as { code?: string }).code ?? "";
  if (code === "HERALD_BLOCKED_DESTINATION") return "blocked_destination";
  if (code === "HERALD_PROXY_ERROR") return "proxy_error";
  if (code === "HERALD_AUTH_ERROR") return "auth_error";
  const name = (err as { name?: string }).name;
  if (code === "ETIMEDOUT" || name === "TimeoutError" || name === "AbortError") return "timeout";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_FAIL" || code === "EAI_NODATA")
    return "dns_error";
  if (/CERT|TLS|SSL|OSSL|SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO/.test(code)) return "tls_error";
  return "connection_error";
}
