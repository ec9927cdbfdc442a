import type { EventType } from "@herald/sdk/types";
import { api, type List } from "../api.ts";
import { useResource } from "./hooks.ts";

/**
 * The event type catalog, loaded once for every view that names types (the catalog, the type
 * pickers, the event filters) rather than once by each. 60 s: catalogs change rarely; a view
 * opened later asks again, and this tab's own changes forget the copy at once.
 */
const FRESH_MS = 60_000;
const cache = new Map<string, { at: number; types: Promise<EventType[]> }>();

type Options = { includeArchived?: boolean };

/**
 * Every event type, by name: the live ones, or archived ones too (events of a type archived
 * since still carry its name). Catalogs are small (tens of types); 100 a page, and at most
 * 10 pages, keeps this bounded.
 */
export function loadEventTypes({ includeArchived = false }: Options = {}): Promise<EventType[]> {
  const key = includeArchived ? "all" : "live";
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < FRESH_MS) return hit.types;
  const types = loadAll(includeArchived);
  cache.set(key, { at: Date.now(), types });
  // A failure is not kept: the next view to ask tries again.
  types.catch(() => {
    if (cache.get(key)?.types === types) cache.delete(key);
  });
  return types;
}

/** After creating, changing or archiving a type, or when the signed-in account changes. */
export function forgetEventTypes(): void {
  cache.clear();
}

export function useEventTypes(options: Options = {}) {
  const includeArchived = options.includeArchived ?? false;
  return useResource(() => loadEventTypes({ includeArchived }), [includeArchived]);
}

async function loadAll(includeArchived: boolean): Promise<EventType[]> {
  const all: EventType[] = [];
  let after: string | undefined;
  for (let page = 0; page < 10; page++) {
    const list = await api.get<List<EventType>>("/v3/event-types", {
      limit: 100,
      include_archived: includeArchived || undefined,
      starting_after: after,
    });
    all.push(...list.data);
    if (!list.has_more || !list.data.length) break;
    after = list.data.at(-1)?.name;
  }
  return all.sort((a, b) => a.name.localeCompare(b.name));
}
