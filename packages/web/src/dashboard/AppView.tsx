import type { App } from "@herald/sdk/types";
import { api } from "../api.ts";
import { AppScopeContext } from "../appScope.tsx";
import { PortalViews, portalNav } from "../portal/PortalViews.tsx";
import { Link } from "../router.tsx";
import { useResource } from "../ui/hooks.ts";
import { NavLinks } from "../ui/Layout.tsx";
import { ErrorNotice, Loading } from "../ui/Notice.tsx";
import { PortalLinks } from "./PortalLinks.tsx";

/** Where an app's portal views live inside the dashboard. */
export const appBase = (appId: string) => `/dashboard/apps/${encodeURIComponent(appId)}`;

/** One app, as its customer's portal shows it, with the account holder's extras around it. */
export function AppView({ segment }: { segment: string }) {
  const app = useResource(() => api.get<App>(`/v3/apps/${segment}`), [segment]);
  if (!app.data)
    return app.error ? (
      <>
        <AppCrumbs />
        <ErrorNotice error={app.error} onRetry={app.reload} />
      </>
    ) : (
      <Loading label="Loading the app…" />
    );
  // The address may name the app by uid; the views use its id, under the address as written.
  const base = `/dashboard/apps/${segment}`;
  return (
    <AppScopeContext.Provider value={{ appId: app.data.id, base, readOnly: false }}>
      <div className="app-bar">
        <AppCrumbs app={app.data} />
        <PortalLinks app={app.data} />
      </div>
      <NavLinks label="App sections" className="subnav" items={portalNav(base)} />
      <PortalViews />
    </AppScopeContext.Provider>
  );
}

function AppCrumbs({ app }: { app?: App }) {
  return (
    <nav aria-label="Breadcrumb" className="crumbs">
      <Link href="/dashboard/apps">Apps</Link>
      {app ? (
        <>
          <span aria-hidden="true"> / </span>
          <span className="app-name">{app.name}</span> <span className="mono muted">{app.uid ?? app.id}</span>
        </>
      ) : null}
    </nav>
  );
}
