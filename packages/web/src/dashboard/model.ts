import type { App } from "@herald/sdk/types";
import { api, type List } from "../api.ts";
import { useResource } from "../ui/hooks.ts";

/**
 * The account's apps (the newest 100), to name them in lists and offer them in filters.
 * An account with more still works: filters also take an id or uid typed in the app page.
 */
export function useApps() {
  return useResource(() => api.get<List<App>>("/v3/apps", { limit: 100 }).then((l) => l.data), []);
}

export function appLabel(apps: App[] | undefined, id: string): string {
  const app = apps?.find((a) => a.id === id);
  return app ? app.name : id;
}
