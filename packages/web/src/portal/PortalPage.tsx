import { useEffect, useState } from "react";
import { whenUnauthenticated } from "../api.ts";
import { AppScopeContext } from "../appScope.tsx";
import { endSession, type Opened, openSession } from "../session.ts";
import { useResource } from "../ui/hooks.ts";
import { Layout } from "../ui/Layout.tsx";
import { ErrorNotice, Loading } from "../ui/Notice.tsx";
import { PortalViews, portalNav } from "./PortalViews.tsx";

/**
 * Once per page load: a link's token can be exchanged only once, and React's development mode
 * runs effects twice. A failure is forgotten, so "Try again" asks again.
 */
let opening: Promise<Opened> | null = null;
function openOnce(): Promise<Opened> {
  opening ??= openSession().catch((err: unknown) => {
    opening = null;
    throw err;
  });
  return opening;
}

/** The customer portal: one app, opened through a portal session link. */
export function PortalPage() {
  const opened = useResource<Opened>(openOnce, []);
  const [ended, setEnded] = useState<string | null>(null);
  useEffect(() => whenUnauthenticated((e) => setEnded(e.message)), []);

  if (ended) return <SignedOut message={ended} />;
  if (opened.error) return <ErrorNotice error={opened.error} onRetry={opened.reload} />;
  if (!opened.data) return <Loading label="Opening the portal…" />;
  const { session } = opened.data;
  if (session?.kind !== "portal" || !session.app)
    return (
      <SignedOut
        message={
          opened.data.problem ||
          "Open the portal through the link you were given. Links work once and expire."
        }
      />
    );
  const scope = { appId: session.app, base: "/portal", readOnly: session.read_only };
  const signOut = async () => {
    await endSession();
    setEnded("You signed out. Open a new link to come back.");
  };
  return (
    <AppScopeContext.Provider value={scope}>
      <Layout
        product="Portal"
        nav={portalNav(scope.base)}
        aside={
          <>
            {session.read_only ? <span>Read-only</span> : null}
            <button type="button" className="button-secondary" onClick={signOut}>
              Sign out
            </button>
          </>
        }
      >
        <PortalViews />
      </Layout>
    </AppScopeContext.Provider>
  );
}

function SignedOut({ message }: { message: string }) {
  return (
    <main id="main" className="signed-out">
      <h1>Herald portal</h1>
      <p role="alert">{message}</p>
    </main>
  );
}
