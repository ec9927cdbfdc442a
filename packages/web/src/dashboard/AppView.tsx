import { api } from "../api.ts";
import { AppScopeContext } from "../appScope.tsx";
import { PortalViews, portalNav } from "../portal/PortalViews.tsx";
import { Link, useLocation } from "../router.tsx";
import type { App } from "../types.ts";
import { useResource } from "../ui/hooks.ts";
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
      <AppNav base={base} />
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

function AppNav({ base }: { base: string }) {
  const { path } = useLocation();
  const items = portalNav(base);
  // The longest matching item is the current one (the endpoints list lives at the base itself).
  const current = items.reduce<string | undefined>(
    (best, item) =>
      (path === item.href || path.startsWith(`${item.href}/`)) && item.href.length > (best?.length ?? 0)
        ? item.href
        : best,
    undefined,
  );
  return (
    <nav aria-label="App sections" className="subnav">
      {items.map((item) => (
        <Link key={item.href} href={item.href} aria-current={item.href === current ? "page" : undefined}>
          {item.label}
        </Link>
      ))}
    </nav>
  );
}
