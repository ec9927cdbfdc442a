/**
 * Short-lived caches of the lookups every event pays for: API key → account, app id or uid →
 * app, event type name → type. A change made through this gateway clears its cache at once;
 * another replica sees it within the TTL (10 s), which is how long a revoked key, a renamed
 * uid or an archived type may still be honoured there.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 50_000,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V): void {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
  }

  clear(): void {
    this.entries.clear();
  }

  async getOrLoad(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const value = await load();
    if (value !== null) this.set(key, value);
    return value;
  }
}

export const CACHE_TTL_MS = 10_000;

/** What authenticating a key needs of its row. */
export type KeyEntry = {
  accountId: string;
  keyId: string;
  revoked: boolean;
  scopes: string[];
  appId: string | null;
  expiresAt: Date | null;
};

export type Caches = {
  keys: TtlCache<KeyEntry>;
  apps: TtlCache<{ id: string; uid: string | null }>;
  eventTypes: TtlCache<{ id: string; schema: unknown; archivedAt: Date | null; updatedAt: Date }>;
};

export function createCaches(ttlMs = CACHE_TTL_MS): Caches {
  return { keys: new TtlCache(ttlMs), apps: new TtlCache(ttlMs), eventTypes: new TtlCache(ttlMs) };
}
