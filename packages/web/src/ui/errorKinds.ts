/**
 * What each attempt error kind means, in a few words for the people whose endpoint it is; the
 * API reference's table of error kinds says the same at length. A kind these pages do not know
 * yet shows as itself.
 */
const MEANINGS: Record<string, string> = {
  timeout: "No response in time.",
  connection_error: "The connection was refused, reset or closed before a response.",
  dns_error: "The host name does not resolve.",
  tls_error:
    "The server's certificate was not accepted (expired, self-signed, untrusted or for another name).",
  http_error: "The endpoint answered with a status other than 2xx.",
  blocked_destination: "The host is, or resolves to, a private or reserved address.",
  proxy_error: "The egress proxy failed, not the endpoint: this does not count toward disabling it.",
  auth_error: "No OAuth2 token could be had from the token URL: the response body says why.",
  invalid_url: "The URL does not parse.",
};

export const errorKindMeaning = (kind: string): string | null =>
  Object.hasOwn(MEANINGS, kind) ? MEANINGS[kind]! : null;
