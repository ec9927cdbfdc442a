import { invalid } from "./errors.ts";

/**
 * Cursor paging, newest first. `starting_after=<id>` gives the next (older) page,
 * `ending_before=<id>` the previous (newer) one. Ids are time-sortable, so a new row sorts
 * before every cursor already handed out and paging never skips or repeats a row.
 */
export const pagingProperties = {
  limit: {
    type: "integer",
    minimum: 1,
    maximum: 100,
    default: 25,
    description: "Page size, 1 to 100. Anything else is a 400; it is never clamped.",
  },
  starting_after: {
    type: "string",
    description: "An id from the list: return the objects after it (older).",
  },
  ending_before: {
    type: "string",
    description: "An id from the list: return the objects before it (newer).",
  },
} as const;

export type PageQuery = { limit: number; starting_after?: string; ending_before?: string };

export type Cursor = { id?: { lt: string } | { gt: string }; order: "asc" | "desc"; take: number };

export type List<T> = { object: "list"; data: T[]; has_more: boolean };

/** Checks the cursors; `resolve` maps a cursor to the id to compare (or null when invalid). */
export async function cursorOf(
  query: PageQuery,
  resolve: (cursor: string) => string | null | Promise<string | null>,
): Promise<Cursor> {
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    throw invalid("ending_before", "Pass starting_after or ending_before, not both.");
  }
  const take = query.limit + 1;
  for (const param of ["starting_after", "ending_before"] as const) {
    const value = query[param];
    if (value === undefined) continue;
    const id = await resolve(value);
    if (id === null) throw invalid(param, `${param} must be an id from this list, got '${value}'.`);
    return param === "starting_after"
      ? { id: { lt: id }, order: "desc", take }
      : { id: { gt: id }, order: "asc", take };
  }
  return { order: "desc", take };
}

/** Trims the extra row fetched to learn `has_more`, and puts rows newest first. */
export function toList<T>(rows: T[], cursor: Cursor, limit: number): List<T> {
  const has_more = rows.length > limit;
  const data = rows.slice(0, limit);
  if (cursor.order === "asc") data.reverse();
  return { object: "list", data, has_more };
}
