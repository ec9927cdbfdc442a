import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError, apiKey, whenUnauthenticated } from "../api.ts";
import { endSession } from "../session.ts";
import { Layout, type NavItem } from "../ui/Layout.tsx";
import { ErrorNotice, Loading } from "../ui/Notice.tsx";
import { forgetEventTypes } from "../ui/useEventTypes.ts";
import { DashboardViews } from "./DashboardViews.tsx";
import { type SignedIn, SignIn, signInOnLoad } from "./SignIn.tsx";

const NAV: NavItem[] = [
  { href: "/dashboard", label: "Overview" },
  { href: "/dashboard/apps", label: "Apps" },
  { href: "/dashboard/event-types", label: "Event types" },
  { href: "/dashboard/events", label: "Events" },
  { href: "/dashboard/attempts", label: "Attempts" },
  { href: "/dashboard/audit-log", label: "Audit log" },
];

type State =
  | { kind: "opening" }
  | { kind: "failed"; error: ApiError }
  | { kind: "signed-out"; message?: string | undefined }
  | { kind: "signed-in"; via: SignedIn; person?: string | undefined };

/** The account holder's dashboard: signs in (API key or link), then every view across apps. */
export function DashboardPage() {
  const [state, setState] = useState<State>({ kind: "opening" });
  const signedIn = useRef(false);
  signedIn.current = state.kind === "signed-in";

  const open = useCallback(() => {
    setState({ kind: "opening" });
    signInOnLoad().then(
      (result) =>
        setState(
          result.via
            ? { kind: "signed-in", via: result.via, person: result.person }
            : { kind: "signed-out", message: result.problem },
        ),
      (error: unknown) =>
        setState({
          kind: "failed",
          error:
            error instanceof ApiError
              ? error
              : new ApiError(0, { type: "api_error", message: String(error) }),
        }),
    );
  }, []);
  useEffect(open, [open]);

  // A key revoked or a session expired while the page is open: back to signing in, saying why.
  useEffect(
    () =>
      whenUnauthenticated((error) => {
        if (!signedIn.current) return;
        signedIn.current = false;
        forgetEventTypes();
        apiKey.clear();
        setState({ kind: "signed-out", message: error.message });
      }),
    [],
  );

  if (state.kind === "opening")
    return (
      <main id="main">
        <Loading label="Opening the dashboard…" />
      </main>
    );
  if (state.kind === "failed")
    return (
      <main id="main">
        <ErrorNotice error={state.error} onRetry={open} />
      </main>
    );
  if (state.kind === "signed-out")
    return <SignIn message={state.message} onSignedIn={(via) => setState({ kind: "signed-in", via })} />;

  // No longer signed in first, so a poll refused while the session ends says nothing; "signed
  // out" only once the server has ended it, so a reload then cannot find the session again.
  const signOut = async () => {
    signedIn.current = false;
    forgetEventTypes();
    apiKey.clear();
    await endSession();
    setState({ kind: "signed-out", message: "You signed out." });
  };
  return (
    <Layout
      product="Dashboard"
      nav={NAV}
      aside={
        <>
          <span className="hide-narrow">
            {state.via === "key"
              ? "Signed in with an API key"
              : state.person
                ? `Signed in as ${state.person}`
                : "Signed in"}
          </span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </>
      }
    >
      <DashboardViews />
    </Layout>
  );
}
