import { createContext, useContext } from "react";

/**
 * Which app the portal views show, and where they live: `/portal` for a customer's portal
 * session, `/dashboard/apps/<id>` when the account holder opens an app from the dashboard.
 */
export type AppScope = { appId: string; base: string; readOnly: boolean };

export const AppScopeContext = createContext<AppScope | null>(null);

export function useAppScope(): AppScope {
  const scope = useContext(AppScopeContext);
  if (!scope) throw new Error("useAppScope outside an AppScopeContext");
  return scope;
}
