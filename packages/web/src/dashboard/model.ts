import { api, type List } from "../api.ts";
import type { App, DeliveryState, EndpointStats } from "../types.ts";
import { useResource } from "../ui/hooks.ts";

/** The dashboard's own API objects (the shared ones are in ../types.ts). */

/**
 * One endpoint's health across the account, from `GET /v3/stats/endpoints` (failing first): the
 * counts of its own stats, which endpoint of which app it is, and how deliveries to it go now.
 */
export type EndpointHealth = Omit<EndpointStats, "object" | "window"> & {
  object: "endpoint_health";
  app: string;
  url: string;
  description: string;
  disabled: boolean;
  delivery_state: DeliveryState;
};

/** `POST /v3/json-schema/validate`: is this a JSON Schema, and an example payload made from it. */
export type SchemaValidation = {
  object: "schema_validation";
  valid: boolean;
  errors: { path: string; message: string }[];
  example: unknown;
};

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
