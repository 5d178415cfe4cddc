/**
 * readAll answers, kept for a short time per merchant and filter set.
 *
 * Why: a readAll builds one JSON document out of every configuration, game and bet constraint of the
 * merchant (PERFORMANCE: ~4 ms of Postgres CPU for 50 configurations × 5 games), while configurations
 * change rarely (admin writes). Platforms poll the same filters over and over; answering repeats from
 * memory keeps Postgres for the work only it can do, such as cancels and /betSlip.
 *
 * Bounds: an entry lives READ_CACHE_TTL_MS (0 switches the cache off). A configuration written through
 * this process's admin API clears the merchant's entries at once; other API processes see it within
 * the TTL. Concurrent misses for one key share a single query. The cache holds at most `maxEntries`.
 */
export interface CachedReadAll {
  body: string;
  total: number | undefined;
}

export class ReadAllCache {
  private readonly entries = new Map<
    string,
    { value: Promise<CachedReadAll>; expiresAt: number; merchantId: string }
  >();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  async get(merchantId: string, key: string, load: () => Promise<CachedReadAll>): Promise<CachedReadAll> {
    if (this.ttlMs <= 0) return load();
    const now = Date.now();
    const fullKey = `${merchantId}\u0000${key}`;
    const cached = this.entries.get(fullKey);
    if (cached && cached.expiresAt > now) return cached.value;

    const value = load();
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(fullKey, { value, expiresAt: now + this.ttlMs, merchantId });
    // A failed load is not remembered: the next request tries again.
    value.catch(() => {
      if (this.entries.get(fullKey)?.value === value) this.entries.delete(fullKey);
    });
    return value;
  }

  /** Called after a configuration of this merchant is written. */
  forgetMerchant(merchantId: string): void {
    for (const [key, entry] of this.entries) {
      if (entry.merchantId === merchantId) this.entries.delete(key);
    }
  }
}
