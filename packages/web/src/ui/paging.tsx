import { useState } from "react";
import { api, type List, type Query } from "../api.ts";
import { type Resource, useResource } from "./hooks.ts";

/**
 * A paged list, newest first. Older pages go by `starting_after` the last item shown (its id, or
 * its name for event types); going back pops the cursor stack, so Previous returns to exactly
 * the page seen before. Another path or query (a filter changed, also by Back) starts again at
 * the first page. The first page polls (new objects appear at the top); older pages hold still.
 */
export function usePagedList<T extends Cursored>(
  path: string,
  query: Query,
  pollMs?: number,
): Resource<List<T>> & { pager: PagerState } {
  const [cursors, setCursors] = useState<string[]>([]);
  const key = JSON.stringify([path, query]);
  const [lastKey, setLastKey] = useState(key);
  if (key !== lastKey) {
    setLastKey(key);
    setCursors([]);
  }
  const after = cursors.at(-1);
  const resource = useResource(
    (signal) => api.get<List<T>>(path, { ...query, limit: query.limit ?? 20, starting_after: after }, signal),
    [key, after],
    after ? undefined : pollMs,
  );
  const data = resource.data;
  return {
    ...resource,
    pager: {
      page: cursors.length + 1,
      hasPrevious: cursors.length > 0,
      hasNext: Boolean(data?.has_more && data.data.length),
      previous: () => setCursors((c) => c.slice(0, -1)),
      next: () => {
        const last = data?.data.at(-1);
        if (last) setCursors((c) => [...c, cursorOf(last)]);
      },
    },
  };
}

type Cursored = { id: string } | { name: string };
const cursorOf = (item: Cursored): string => ("id" in item ? item.id : item.name);

export type PagerState = {
  page: number;
  hasPrevious: boolean;
  hasNext: boolean;
  previous: () => void;
  next: () => void;
};

export function Pager({ pager, label }: { pager: PagerState; label: string }) {
  if (!pager.hasPrevious && !pager.hasNext) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button
        type="button"
        className="button-secondary"
        disabled={!pager.hasPrevious}
        onClick={pager.previous}
      >
        ← Newer
      </button>
      <span className="muted">Page {pager.page}</span>
      <button type="button" className="button-secondary" disabled={!pager.hasNext} onClick={pager.next}>
        Older →
      </button>
    </nav>
  );
}
