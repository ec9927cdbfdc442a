import { type FormEvent, useEffect, useRef, useState } from "react";
import { api, apiKey } from "../api.ts";
import { openSession } from "../session.ts";
import { Field } from "../ui/Field.tsx";
import { useAction } from "../ui/hooks.ts";

/** How this tab is signed in: an API key it holds, or a dashboard session's cookie. */
export type SignedIn = "key" | "session";

/** `person`: who signed in by single sign-on, when it was that. */
export type OnLoad = { via: SignedIn | null; problem?: string; person?: string };

/** Once per page load: a link's token can be exchanged only once (React's dev mode runs effects twice). */
let onLoad: Promise<OnLoad> | null = null;
export function signInOnLoad(): Promise<OnLoad> {
  onLoad ??= checkOnLoad().catch((err: unknown) => {
    onLoad = null; // to try again
    throw err;
  });
  return onLoad;
}

/**
 * On load: a sign-in link (`#token=` in the address) wins; then an API key this tab already
 * holds; then a dashboard session cookie from an earlier link. Otherwise, the sign-in form.
 */
async function checkOnLoad(): Promise<OnLoad> {
  const hash = new URLSearchParams(location.hash.slice(1));
  // Single sign-on refused (sso/routes.ts): say why, and take it out of the address.
  const refused = hash.get("sso_error");
  if (refused) {
    history.replaceState(history.state, "", location.pathname + location.search);
    return { via: null, problem: refused };
  }
  const linked = hash.has("token");
  if (!linked && apiKey.get()) return { via: "key" };
  const { session, problem } = await openSession();
  if (session?.kind === "dashboard") {
    // The link's session is who this tab is now; a key from before would override its cookie.
    if (linked) apiKey.clear();
    return session.person ? { via: "session", person: session.person } : { via: "session" };
  }
  if (apiKey.get()) return { via: "key" };
  if (session)
    return { via: null, problem: "This browser holds a portal session, which cannot open the dashboard." };
  return problem ? { via: null, problem } : { via: null };
}

export function SignIn({
  message,
  onSignedIn,
}: {
  message?: string | undefined;
  onSignedIn: (via: SignedIn) => void;
}) {
  const [key, setKey] = useState("");
  const [sso, setSso] = useState(false);
  useEffect(() => {
    api.get<{ enabled: boolean }>("/sso").then(
      (r) => setSso(r.enabled),
      () => setSso(false),
    );
  }, []);
  const verify = useAction(async (candidate: string) => {
    apiKey.set(candidate);
    try {
      await api.get("/v3/apps", { limit: 1 });
    } catch (err) {
      apiKey.clear();
      throw err;
    }
    onSignedIn("key");
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void verify.run(key.trim());
  };
  // A refused key: back to the field, whose description now holds the reason.
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (verify.error) input.current?.focus();
  }, [verify.error]);
  return (
    <main id="main" className="sign-in">
      <h1>Sign in to the Herald dashboard</h1>
      {message ? (
        <p className="notice notice-info" role="status">
          {message}
        </p>
      ) : null}
      {sso ? (
        <p>
          <a className="button" href="/sso/login">
            Sign in with single sign-on
          </a>
        </p>
      ) : null}
      <form className="card" onSubmit={submit} noValidate>
        <Field
          label="API key"
          hint="Kept in this browser tab only, until you sign out or close the tab."
          error={verify.error?.message}
        >
          {(props) => (
            <input
              {...props}
              ref={input}
              type="password"
              autoComplete="off"
              spellCheck={false}
              required
              value={key}
              onChange={(e) => setKey(e.target.value)}
            />
          )}
        </Field>
        <button type="submit" disabled={verify.busy || !key.trim()}>
          {verify.busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <p className="muted">
        Or open a sign-in link: <code>POST /v3/dashboard-sessions</code> makes one, valid once and for a
        limited time.
      </p>
    </main>
  );
}
