import type { Endpoint } from "@herald/sdk/types";
import { useId } from "react";
import { Field } from "../ui/Field.tsx";
import { Time } from "../ui/Time.tsx";

/**
 * How Herald authenticates to the endpoint: mutual TLS (a client certificate and its key, and a
 * CA for its server) and OAuth2 client credentials. The key and the client secret are
 * write-only: the form never has them, an empty box keeps what is saved, and a box filled in
 * replaces it; the client secret's box asks for it again when the form would send it elsewhere.
 * "Remove" takes the whole of one away.
 */
export type AuthValues = {
  clientCertificate: string;
  clientKey: string;
  caCertificate: string;
  removeTls: boolean;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  removeOAuth2: boolean;
};

export const authValues = (e: Endpoint | null): AuthValues => ({
  clientCertificate: "",
  clientKey: "",
  caCertificate: "",
  removeTls: false,
  tokenUrl: e?.oauth2?.token_url ?? "",
  clientId: e?.oauth2?.client_id ?? "",
  clientSecret: "",
  scope: e?.oauth2?.scope ?? "",
  removeOAuth2: false,
});

const typed = (value: string) => (value.trim() ? value : undefined);

/** The body's `tls` and `oauth2`: only what was typed (the API keeps the rest), or null to remove. */
export function authBody(v: AuthValues, saved: Endpoint | null) {
  const body: { tls?: Record<string, string> | null; oauth2?: Record<string, string | null> | null } = {};
  if (v.removeTls) body.tls = null;
  else {
    const tls = Object.fromEntries(
      Object.entries({
        client_certificate: typed(v.clientCertificate),
        client_key: typed(v.clientKey),
        ca_certificate: typed(v.caCertificate),
      }).filter(([, value]) => value !== undefined),
    ) as Record<string, string>;
    if (Object.keys(tls).length) body.tls = tls;
  }
  if (v.removeOAuth2) body.oauth2 = null;
  else if (v.tokenUrl.trim() || saved?.oauth2) {
    const o = saved?.oauth2;
    const changed =
      v.tokenUrl.trim() !== (o?.token_url ?? "") ||
      v.clientId.trim() !== (o?.client_id ?? "") ||
      v.scope.trim() !== (o?.scope ?? "") ||
      v.clientSecret !== "";
    if (changed)
      body.oauth2 = {
        token_url: v.tokenUrl.trim(),
        client_id: v.clientId.trim(),
        scope: v.scope.trim() || null,
        ...(v.clientSecret ? { client_secret: v.clientSecret } : {}),
      };
  }
  return body;
}

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * Why the saved client secret must be typed again for the form to save, or null. A saved secret
 * goes only where it was set for: any other token URL (another path on the same site too), another
 * client ID, or an endpoint URL on another site needs it again, as the API does.
 */
export function secretNeeded(v: AuthValues, saved: Endpoint | null, url: string): string | null {
  const o = saved?.oauth2;
  if (!o || !saved || v.removeOAuth2 || v.clientSecret) return null;
  if (v.tokenUrl.trim() && !sameUrl(v.tokenUrl.trim(), o.token_url))
    return "The token URL changed: type the client secret again to save.";
  if (v.clientId.trim() && v.clientId.trim() !== o.client_id)
    return "The client ID changed: type the client secret again to save.";
  if (url.trim() && originOf(url.trim()) !== originOf(saved.url))
    return "The URL moves to another site: type the client secret again to save, or remove OAuth2.";
  return null;
}

export const AUTH_PARAMS = [
  "tls.client_certificate",
  "tls.client_key",
  "tls.ca_certificate",
  "oauth2.token_url",
  "oauth2.client_id",
  "oauth2.client_secret",
  "oauth2.scope",
] as const;

function Pem({
  label,
  hint,
  value,
  onChange,
  error,
}: {
  label: string;
  hint: string;
  value: string;
  onChange: (value: string) => void;
  error: string | null;
}) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(props) => (
        <textarea
          {...props}
          className="mono"
          rows={3}
          spellCheck={false}
          placeholder="-----BEGIN …-----"
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

export function AuthFields({
  values,
  saved,
  url,
  onChange,
  errorAt,
}: {
  values: AuthValues;
  saved: Endpoint | null;
  /** The endpoint URL as typed. */
  url: string;
  onChange: (change: Partial<AuthValues>) => void;
  errorAt: (param: string) => string | null;
}) {
  const hintId = useId();
  const needed = secretNeeded(values, saved, url);
  const tls = saved?.tls;
  const keep = (what: string, has: boolean) =>
    has ? `Saved. Leave empty to keep it; ${what}` : `${what[0]!.toUpperCase()}${what.slice(1)}`;
  return (
    <fieldset aria-describedby={hintId}>
      <legend>Authentication</legend>
      <p id={hintId} className="hint fieldset-hint">
        Optional, besides the signature: a client certificate (mutual TLS), an OAuth2 token, or both. Keys and
        secrets are never shown again once saved; another token URL (even on the same site), another client
        ID, or an endpoint URL on another site needs the client secret again.
      </p>
      {tls?.client_certificate ? (
        <p className="hint">
          Client certificate: <span className="mono">{tls.client_certificate.subject}</span>, valid until{" "}
          <Time value={tls.client_certificate.not_after} />.
        </p>
      ) : null}
      <Pem
        label="Client certificate (PEM)"
        hint={keep("the leaf first, then any intermediates.", Boolean(tls?.client_certificate))}
        value={values.clientCertificate}
        onChange={(clientCertificate) => onChange({ clientCertificate })}
        error={errorAt("tls.client_certificate")}
      />
      <Pem
        label="Private key (PEM)"
        hint={keep("unencrypted; write-only.", Boolean(tls?.client_key))}
        value={values.clientKey}
        onChange={(clientKey) => onChange({ clientKey })}
        error={errorAt("tls.client_key")}
      />
      <Pem
        label="CA certificate for the endpoint's server (PEM)"
        hint={keep("only if its server uses a private CA.", Boolean(tls?.ca_certificate))}
        value={values.caCertificate}
        onChange={(caCertificate) => onChange({ caCertificate })}
        error={errorAt("tls.ca_certificate")}
      />
      {tls ? (
        <label className="checkbox">
          <input
            type="checkbox"
            checked={values.removeTls}
            onChange={(e) => onChange({ removeTls: e.target.checked })}
          />{" "}
          Remove mutual TLS
        </label>
      ) : null}
      <Field
        label="OAuth2 token endpoint"
        hint="Client credentials grant. Leave empty for none."
        error={errorAt("oauth2.token_url")}
      >
        {(props) => (
          <input
            {...props}
            type="url"
            spellCheck={false}
            placeholder="https://auth.example.com/oauth/token"
            value={values.tokenUrl}
            onChange={(e) => onChange({ tokenUrl: e.target.value })}
          />
        )}
      </Field>
      <Field label="OAuth2 client ID" error={errorAt("oauth2.client_id")}>
        {(props) => (
          <input
            {...props}
            spellCheck={false}
            value={values.clientId}
            onChange={(e) => onChange({ clientId: e.target.value })}
          />
        )}
      </Field>
      <Field
        label="OAuth2 client secret"
        hint={needed ?? (saved?.oauth2 ? "Saved. Leave empty to keep it." : "Write-only.")}
        error={errorAt("oauth2.client_secret")}
      >
        {(props) => (
          <input
            {...props}
            required={needed !== null}
            type="password"
            autoComplete="new-password"
            value={values.clientSecret}
            onChange={(e) => onChange({ clientSecret: e.target.value })}
          />
        )}
      </Field>
      <Field label="OAuth2 scope" hint="Optional." error={errorAt("oauth2.scope")}>
        {(props) => (
          <input
            {...props}
            spellCheck={false}
            value={values.scope}
            onChange={(e) => onChange({ scope: e.target.value })}
          />
        )}
      </Field>
      {saved?.oauth2 ? (
        <label className="checkbox">
          <input
            type="checkbox"
            checked={values.removeOAuth2}
            onChange={(e) => onChange({ removeOAuth2: e.target.checked })}
          />{" "}
          Remove OAuth2
        </label>
      ) : null}
    </fieldset>
  );
}
