/**
 * How Herald authenticates to an endpoint, as sealed in `endpoints.auth_sealed` and opened by
 * the senders (the gateway checks it; nothing here does I/O).
 */
export type EndpointAuth = {
  /**
   * A destination's credentials, from its URL's user info (amqp://user:pass@…, an S3 access key
   * and secret): the URL is saved with `[redacted]` in their place.
   */
  url_credentials?: { username: string; password: string };
  /** Mutual TLS and the trust of the endpoint's server: PEM text. */
  tls?: {
    /** The client certificate (a chain: the leaf first) and its private key, together or neither. */
    certificate?: string;
    key?: string;
    /** Certificates to trust for the endpoint's server, instead of the public roots. */
    ca?: string;
  };
  /** OAuth2 client credentials (RFC 6749 §4.4): a bearer token fetched, cached, refreshed on a 401. */
  oauth2?: {
    token_url: string;
    client_id: string;
    client_secret: string;
    scope?: string;
    audience?: string;
    /** How the client authenticates to the token endpoint: HTTP Basic (default) or in the form body. */
    client_auth?: "basic" | "post";
  };
};
