import type { Endpoint } from "@herald/sdk/types";
import { api, type List } from "../api.ts";
import { typeLabel, urlType } from "../ui/destinationUrl.ts";
import { useResource } from "../ui/hooks.ts";

/** Where each portal view lives under the scope's base (`/portal` or `/dashboard/apps/<id>`). */
export const paths = {
  endpoints: (base: string) => base,
  newEndpoint: (base: string) => `${base}/endpoints/new`,
  endpoint: (base: string, id: string) => `${base}/endpoints/${encodeURIComponent(id)}`,
  editEndpoint: (base: string, id: string) => `${base}/endpoints/${encodeURIComponent(id)}/edit`,
  catalog: (base: string) => `${base}/catalog`,
  events: (base: string) => `${base}/events`,
  event: (base: string, id: string) => `${base}/events/${encodeURIComponent(id)}`,
  attempt: (base: string, id: string) => `${base}/attempts/${encodeURIComponent(id)}`,
};

/** The app's endpoints (first 100), to name them in deliveries and filters. */
export function useAppEndpoints(appId: string, pollMs?: number) {
  return useResource(
    () => api.get<List<Endpoint>>("/v3/endpoints", { app: appId, limit: 100 }).then((l) => l.data),
    [appId],
    pollMs,
  );
}

/**
 * An endpoint as people recognise it: its description, else its host and path; a destination by
 * its type and the rest of its URL, the query included (two streams on one server differ there
 * only), without the `[redacted]` of its credentials.
 */
export function endpointLabel(endpoint: Endpoint | undefined, id: string): string {
  if (!endpoint) return id;
  if (endpoint.description) return endpoint.description;
  const type = urlType(endpoint.url);
  if (type && type !== "http")
    return `${typeLabel(type)} ${endpoint.url.replace(/^[^:]+:\/\/(\[redacted\]@)?/, "")}`;
  try {
    const url = new URL(endpoint.url);
    return `${url.host}${url.pathname === "/" ? "" : url.pathname}`;
  } catch {
    return endpoint.url;
  }
}

export function byId<T extends { id: string }>(items: T[] | undefined): Map<string, T> {
  return new Map((items ?? []).map((item) => [item.id, item]));
}
