import { LoadingCache } from '../../shared/cache/loading-cache.js';

/**
 * readAll answers, kept for a short time per merchant and filter set.
 *
 * Why: a readAll builds one JSON document out of every configuration, game and bet constraint of the
 * merchant (milliseconds of Postgres CPU each, for 50 configurations × 5 games), while configurations
 * change rarely (admin writes). Platforms poll the same filters over and over; answering repeats from
 * memory keeps Postgres for the work only it can do, such as cancels and /betSlip.
 *
 * Bounds: an entry lives READ_CACHE_TTL_MS (0 switches the cache off); at most READ_CACHE_MAX_ENTRIES
 * answers and READ_CACHE_MAX_BYTES of them are kept, the least recently used leaving first. A
 * configuration written through this process's admin API clears the merchant's entries at once;
 * other API processes see it within the TTL. Concurrent misses for one key share a single query
 * (those in flight are bounded by the requests being served, not by the cache).
 *
 * Refresh ahead: a hit on an answer older than half the TTL is served as it is and starts one
 * reload in the background, which replaces the answer when it arrives. A key that is asked for
 * steadily is therefore never missed after its first load: no caller waits for the query, also while
 * a large cancel keeps Postgres busy (the readAll p99 during a 1,000,000-reward cancel showed the
 * misses as the slow requests; bench/README.md). An answer is still never served longer than the TTL after it
 * was read.
 */
export interface CachedReadAll {
  /**
   * The answer's JSON as UTF-8 bytes, encoded once when loaded: a string body would be measured and
   * encoded again for every answer (for 50 configurations, ~57 KB each time; a profile of readAll under
   * load put that encoding at about a fifth of the API's busy time).
   */
  body: Uint8Array<ArrayBuffer>;
  total: number | undefined;
}

export interface ReadAllCacheOptions {
  ttlMs: number;
  maxEntries: number;
  maxBytes: number;
  /** The clock, in milliseconds (tests that move time); the cache's own otherwise. */
  now?: () => number;
}

export class ReadAllCache {
  private readonly answers: LoadingCache<CachedReadAll>;

  constructor(private readonly options: ReadAllCacheOptions) {
    this.answers = new LoadingCache({
      ...options,
      // The key is counted too, as callers choose its filters.
      sizeOf: (answer, key) => answer.body.byteLength + key.length,
      refreshAfterMs: options.ttlMs / 2,
    });
  }

  /**
   * `key` must already be normalised by the caller: two requests with equal keys must get the same
   * answer, and it should be equal whenever they do.
   */
  async get(merchantId: string, key: string, load: () => Promise<CachedReadAll>): Promise<CachedReadAll> {
    // Switched off: every request reads, none shares another's read.
    if (this.options.ttlMs <= 0) return load();
    return this.answers.get(`${merchantPrefix(merchantId)}${key}`, load);
  }

  /** Called after a configuration of this merchant is written. */
  forgetMerchant(merchantId: string): void {
    const prefix = merchantPrefix(merchantId);
    this.answers.forgetWhere((key) => key.startsWith(prefix));
  }
}

/**
 * Where a merchant's keys begin. A merchant id names a Postgres row, and Postgres text cannot hold
 * NUL, so no id followed by NUL is the beginning of another merchant's key.
 */
function merchantPrefix(merchantId: string): string {
  return `${merchantId.toLowerCase()}\u0000`;
}

/** The readAll filters that change its answer, as the query reads them. */
export interface ReadAllKeyParts {
  name: string | undefined;
  status: string | undefined;
  rewardType: string | undefined;
  page: { limit: number; offset: number } | undefined;
}

/**
 * One key per answer. The query matches `name` as `strpos(lower(name), lower($name)) > 0`, so:
 * - ASCII letters are folded to lower case: every Postgres collation (bar Turkish ones, which this
 *   service does not use) lowers them as JavaScript does. Other letters stay as sent: JavaScript and
 *   Postgres may lower them differently, and two names that only might match must not share an answer.
 * - No trimming and no Unicode normalisation: the query does neither, so " Gold" and "Gold" differ.
 * - An empty name matches every configuration, as no name filter does.
 * Without `limit`/`offset` the answer has no X-Total-Count, so it is a different key from page 1.
 */
export function readAllCacheKey(parts: ReadAllKeyParts): string {
  const name = parts.name ? parts.name.replace(/[A-Z]+/g, (letters) => letters.toLowerCase()) : undefined;
  return JSON.stringify([name, parts.status, parts.rewardType, parts.page?.limit, parts.page?.offset]);
}
