import { LRUCache } from 'lru-cache';

export interface LoadingCacheOptions<V> {
  /** How long a value is served after its load began; 0 keeps nothing (every call loads). */
  ttlMs: number;
  maxEntries: number;
  maxBytes: number;
  /** The memory a value holds, in bytes (an estimate is fine: it is a bound, not an account). */
  sizeOf: (value: V, key: string) => number;
  /**
   * Refresh ahead: a hit on a value read at least this long ago is served as it is and starts one
   * reload in the background, which replaces it when it arrives. Omitted: reloaded once expired.
   */
  refreshAfterMs?: number;
  /**
   * When a load fails with an error this picks, the last value read for the key (expired or not, as
   * long as the bounds kept it) is answered instead. Omitted: a failed load always rejects.
   */
  serveStaleOn?: (error: unknown) => boolean;
  /** With `serveStaleOn`: a last known value read longer ago than this is not answered. Omitted: no limit. */
  staleMaxAgeMs?: number;
  /**
   * Loads that answer `answer` (nothing under this key) are remembered apart, in a cache of at most
   * `maxEntries`: keys made up by a caller then only ever evict other made-up keys, never real values.
   */
  absent?: { maxEntries: number; answer: V };
  /** The clock, in milliseconds (tests); lru-cache's own (performance.now) otherwise. */
  now?: () => number;
}

interface Loaded<V> {
  value: V;
  /** When the load that read it began, on the cache's clock. */
  loadedAt: number;
}

type Load<V> = () => Promise<V>;

/**
 * A bounded cache that loads what it misses, on lru-cache: the one mechanism behind the API's caches
 * (merchant records, readAll answers) and the notifier's webhook subscriptions. lru-cache holds the
 * values within `max` entries and `maxSize` bytes, expires them after `ttl`, shares one `fetch` between
 * concurrent misses, and serves the stale value when a load fails and `allowStaleOnFetchRejection` says so.
 * What this adds: the loader is passed per call (`context`), refresh ahead (`forceRefresh` past
 * `refreshAfterMs`), which errors may answer a stale value and how old, and the separate cache of absent keys.
 *
 * `forget`/`forgetWhere` drop values at once, and keep out a load of those keys already under way (its
 * caller gets its answer, it is not stored): such a load may have read the value before the write.
 */
export class LoadingCache<V> {
  private readonly values: LRUCache<string, Loaded<V>, Load<V>> | undefined;
  /**
   * With `absent`: the keys not in `values` are loaded here, and only what they found moves to `values`.
   * lru-cache holds a fetch under way as an entry of its cache, so made-up keys loaded there at once
   * would evict real values while their loads run; here they evict only each other.
   */
  private readonly unknown: LRUCache<string, Loaded<V>, Load<V>> | undefined;
  /** Keys with a load under way (lru-cache's key listings skip them), counted per load. */
  private readonly loading = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: LoadingCacheOptions<V>) {
    // A test's clock jumps: lru-cache then reads it on every check rather than once per millisecond.
    const clock = options.now === undefined ? {} : { perf: { now: options.now }, ttlResolution: 0 };
    this.now = options.now ?? (() => performance.now());
    if (options.ttlMs <= 0 || options.maxEntries <= 0) return;
    this.values = new LRUCache<string, Loaded<V>, Load<V>>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      sizeCalculation: (loaded, key) => Math.max(1, Math.ceil(options.sizeOf(loaded.value, key))),
      ttl: options.ttlMs,
      // A delete (a forget) lets the load under way answer its callers without storing what it read.
      ignoreFetchAbort: true,
      // A failed refresh ahead leaves the value to expire rather than dropping it; a failed miss with
      // no value before it is dropped all the same.
      noDeleteOnFetchRejection: true,
      fetchMethod: (key, stale, fetcher) => this.load(key, stale, fetcher),
      ...clock,
    });
    if (options.absent) {
      this.unknown = new LRUCache<string, Loaded<V>, Load<V>>({
        max: options.absent.maxEntries,
        ttl: options.ttlMs,
        ignoreFetchAbort: true,
        fetchMethod: (key, stale, fetcher) => this.load(key, stale, fetcher),
        ...clock,
      });
    }
  }

  /** The value under `key`: held, shared with a load under way, or read now by `load`. */
  async get(key: string, load: Load<V>): Promise<V> {
    const { values } = this;
    if (values === undefined) return load();
    // Held at all (fresh, expired or being refreshed): values' own fetch, which may answer it stale on error.
    if (this.unknown && values.peek(key, { allowStale: true }) === undefined) return this.loadUnknown(key, load);
    const remainingMs = values.getRemainingTTL(key);
    const fresh = remainingMs > 0;
    const { refreshAfterMs } = this.options;
    const refresh = fresh && refreshAfterMs !== undefined && remainingMs <= this.options.ttlMs - refreshAfterMs;
    // A fresh value is served while its refresh runs; an expired one never is. lru-cache counts a value
    // as stale only once its age exceeds the TTL: at exactly the TTL it is read again here as well.
    const loaded = await values.fetch(key, { context: load, forceRefresh: refresh || !fresh, allowStale: fresh });
    // lru-cache resolves undefined only for a stale answer allowed on failure with none held: never here.
    if (loaded === undefined) throw new Error(`loading cache: no value for ${key}`);
    return loaded.value;
  }

  /** A key `values` does not hold, with `absent`: loaded in `unknown`; a value it finds moves to `values`. */
  private async loadUnknown(key: string, load: Load<V>): Promise<V> {
    const { values, unknown, options } = this;
    if (values === undefined || unknown === undefined) return load();
    const loaded = await unknown.fetch(key, { context: load });
    if (loaded === undefined) throw new Error(`loading cache: no value for ${key}`);
    // Moved once, by the first of the callers sharing the load, unless a forget dropped it meanwhile.
    if (!Object.is(loaded.value, options.absent?.answer) && unknown.peek(key) === loaded) {
      unknown.delete(key);
      values.set(key, loaded, { ttl: Math.max(1, options.ttlMs - (this.now() - loaded.loadedAt)) });
    }
    return loaded.value;
  }

  /** Drops the key's value and keeps out a load of it under way. */
  forget(key: string): void {
    this.values?.delete(key);
    this.unknown?.delete(key);
  }

  /** Drops every key the predicate picks (O(entries): for rare admin writes) and keeps out their loads under way. */
  forgetWhere(predicate: (key: string) => boolean): void {
    const { values, unknown } = this;
    if (values === undefined) return;
    // dump() lists expired values and those being refreshed too; loads of missed keys are tracked apart.
    const keys = [...values.dump().map(([key]) => key), ...this.loading.keys()];
    if (unknown) keys.push(...unknown.dump().map(([key]) => key));
    for (const key of keys) {
      if (predicate(key)) this.forget(key);
    }
  }

  private async load(
    key: string,
    stale: Loaded<V> | undefined,
    { options, context: load }: LRUCache.FetcherOptions<string, Loaded<V>, Load<V>>,
  ): Promise<Loaded<V>> {
    const loadedAt = this.now();
    this.loading.set(key, (this.loading.get(key) ?? 0) + 1);
    try {
      const value = await load();
      // Counted from when the load began, not when it ended.
      options.ttl = Math.max(1, this.options.ttlMs - (this.now() - loadedAt));
      return { value, loadedAt };
    } catch (error) {
      const maxAge = this.options.staleMaxAgeMs ?? Number.POSITIVE_INFINITY;
      if (stale && this.options.serveStaleOn?.(error) && this.now() - stale.loadedAt <= maxAge) {
        // lru-cache answers the stale value and keeps it, as it was: the next call loads again.
        options.allowStaleOnFetchRejection = true;
      }
      throw error;
    } finally {
      const left = (this.loading.get(key) ?? 1) - 1;
      if (left === 0) this.loading.delete(key);
      else this.loading.set(key, left);
    }
  }
}
