/**
 * Cursor paging over the API's lists (newest first). A list method returns a PageIterator: it
 * fetches nothing until used, and every use starts again from the query it was given.
 *
 *   for await (const attempt of herald.attempts.list({ endpoint })) …   every item, page by page
 *   const page = await herald.attempts.list({ endpoint, limit: 10 }).firstPage()   one page
 *   for await (const page of herald.attempts.list({ endpoint }).pages()) …   page by page
 *
 * Forward (the default, or with `starting_after`) goes to older items, passing the last id of
 * each page as the next `starting_after`. With `ending_before` it goes to newer items, passing
 * the first id of each page as the next `ending_before`, and yields items oldest first, so the
 * sequence moves steadily away from the cursor either way.
 */
export type Page<T> = { object: "list"; data: T[]; has_more: boolean };

export type PageQuery = { limit?: number; starting_after?: string; ending_before?: string };

export class PageIterator<T, Q extends PageQuery = PageQuery> implements AsyncIterable<T> {
  constructor(
    private readonly fetchPage: (query: Q) => Promise<Page<T>>,
    private readonly query: Q,
    /** The cursor an item stands for: its id, or for an event's deliveries, its endpoint. */
    private readonly cursorOf: (item: T) => string,
  ) {}

  /** The first page only, as the API returns it. */
  firstPage(): Promise<Page<T>> {
    return this.fetchPage(this.query);
  }

  /** Each page in turn, until one says `has_more: false`. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    const backward = this.query.ending_before !== undefined;
    let query = this.query;
    for (;;) {
      const page = await this.fetchPage(query);
      yield page;
      const edge = backward ? page.data[0] : page.data[page.data.length - 1];
      if (!page.has_more || edge === undefined) return;
      query = backward
        ? { ...query, ending_before: this.cursorOf(edge) }
        : { ...query, starting_after: this.cursorOf(edge) };
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    const backward = this.query.ending_before !== undefined;
    for await (const page of this.pages()) yield* backward ? [...page.data].reverse() : page.data;
  }

  /** Every item into an array, stopping after `max` items (all by default). */
  async toArray(options: { max?: number } = {}): Promise<T[]> {
    const max = options.max ?? Number.POSITIVE_INFINITY;
    const items: T[] = [];
    if (max <= 0) return items;
    for await (const item of this) {
      items.push(item);
      if (items.length >= max) break;
    }
    return items;
  }
}
