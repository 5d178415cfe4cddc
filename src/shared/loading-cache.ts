interface BoundedCacheOptions<V> {
  /** Most entries held at once. */
  maxEntries: number;
  /** Most bytes held at once, as `sizeOf` counts them; a value larger than this is not kept at all. */
  maxBytes: number;
  /** How long an entry is served after it was stored. */
  ttlMs: number;
  /** The memory an entry holds, in bytes (an estimate is fine: it is a bound, not an account). */
  sizeOf: (value: V, key: string) => number;
  /**
   * Keep expired entries (still within the bounds) so that `getStale` can serve them when the source
   * of truth cannot be read. Off by default: an expired entry is dropped on its next lookup.
   */
  keepExpired?: boolean;
}

interface Entry<V> {
  value: V;
  bytes: number;
  expiresAt: number;
}

/**
 * A least-recently-used cache bounded by entries and by bytes, with a time to live: the storage of
 * `LoadingCache` below (exported for its own tests).
 *
 * Why its own: every in-process cache of the API is keyed by what callers send, so without both bounds
 * a caller could grow the process's memory (many keys, or few huge values) until it dies. A `Map`
 * keeps insertion order, so moving an entry to the end on each hit makes its first key the least
 * recently used one: eviction and lookups stay O(1) without a linked list of our own.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private heldBytes = 0;

  constructor(private readonly options: BoundedCacheOptions<V>) {}

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  /** The value, if held and not expired; a hit makes the entry the most recently used. */
  get(key: string, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      if (!this.options.keepExpired) this.remove(key, entry);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Stores the value (replacing any older one), then evicts least recently used entries past the bounds. */
  set(key: string, value: V, now = Date.now()): void {
    const previous = this.entries.get(key);
    if (previous) this.remove(key, previous);
    if (this.options.ttlMs <= 0 || this.options.maxEntries <= 0) return;
    const bytes = this.options.sizeOf(value, key);
    // Storing it would evict everything else and still not fit.
    if (bytes > this.options.maxBytes) return;

    this.entries.set(key, { value, bytes, expiresAt: now + this.options.ttlMs });
    this.heldBytes += bytes;
    for (const [oldestKey, oldest] of this.entries) {
      if (this.entries.size <= this.options.maxEntries && this.heldBytes <= this.options.maxBytes) break;
      this.remove(oldestKey, oldest);
    }
  }

  /** The value, expired or not (with `keepExpired`): the last known answer, for when no fresh one can be had. */
  getStale(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry) this.remove(key, entry);
  }

  /** Removes every entry the predicate picks (O(entries): for rare admin writes, not per request). */
  deleteWhere(predicate: (key: string, value: V) => boolean): void {
    for (const [key, entry] of this.entries) {
      if (predicate(key, entry.value)) this.remove(key, entry);
    }
  }

  private remove(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    this.heldBytes -= entry.bytes;
  }
}

export interface LoadingCacheOptions<V> {
  /** How long a value is served after it was read; 0 keeps nothing (concurrent misses still share one load). */
  ttlMs: number;
  maxEntries: number;
  maxBytes: number;
  /** The memory a value holds, in bytes, as for `BoundedCache`. */
  sizeOf: (value: V, key: string) => number;
  /**
   * Refresh ahead: a hit on a value read at least this long ago is served as it is and starts one
   * reload in the background, which replaces it when it arrives. A key asked for steadily is then
   * never missed after its first load. Omitted: a value is only reloaded once it expired.
   */
  refreshAfterMs?: number;
  /**
   * When a load fails with an error this picks, the last value read for the key (expired or not, as
   * long as the bounds kept it) is answered instead. Omitted: a failed load always rejects.
   */
  serveStaleOn?: (error: unknown) => boolean;
  /**
   * With `serveStaleOn`: a last known value read longer ago than this is not answered (the failure is),
   * so an outage cannot keep a value in use forever. Omitted: no limit.
   */
  staleMaxAgeMs?: number;
  /**
   * Loads that answered `null` (nothing under this key) are remembered apart, in a cache of at most
   * `maxEntries`, each counted as `bytes`: keys made up by a caller then only ever evict other made-up
   * keys, never the values of real ones. Omitted: `null` is kept like any other value.
   */
  absent?: { maxEntries: number; bytes: number };
}

interface Loaded<V> {
  value: V;
  /** When the load that read it began (epoch ms): the value is no older than that. */
  loadedAt: number;
}

/**
 * A bounded cache that loads what it misses: the one mechanism behind the API's caches (merchant
 * records, readAll answers) and the notifier's webhook subscriptions.
 *
 * - Concurrent misses for one key share a single load (those in flight are bounded by the requests
 *   being served, not by the cache). A failed load is not remembered: the next request tries again.
 * - A value is never served longer than `ttlMs` after its load began, refreshed ahead or not; a failed
 *   background reload leaves the value to expire, and the next miss then meets the error.
 * - `forget`/`forgetWhere` drop values at once, and also keep out every load already under way (for
 *   any key): such a load may have read the value before the write that caused the forget.
 */
export class LoadingCache<V> {
  private readonly values: BoundedCache<Loaded<V>>;
  private readonly absent: BoundedCache<V> | undefined;
  /** Loads under way, one per key. */
  private readonly loading = new Map<string, Promise<V>>();
  /** Bumped by every forget: a load that began before it is answered but not kept. */
  private generation = 0;

  constructor(private readonly options: LoadingCacheOptions<V>) {
    this.values = new BoundedCache({
      ttlMs: options.ttlMs,
      maxEntries: options.maxEntries,
      maxBytes: options.maxBytes,
      sizeOf: (loaded, key) => options.sizeOf(loaded.value, key),
      keepExpired: options.serveStaleOn !== undefined,
    });
    if (options.absent) {
      const { maxEntries, bytes } = options.absent;
      this.absent = new BoundedCache({
        ttlMs: options.ttlMs,
        maxEntries,
        maxBytes: maxEntries * bytes,
        sizeOf: () => bytes,
      });
    }
  }

  /** The value under `key`: held, shared with a load under way, or read now by `load`. */
  async get(key: string, load: () => Promise<V>): Promise<V> {
    const held = this.values.get(key);
    if (held) {
      const { refreshAfterMs } = this.options;
      if (refreshAfterMs !== undefined && Date.now() - held.loadedAt >= refreshAfterMs && !this.loading.has(key)) {
        this.load(key, load).catch(() => {});
      }
      return held.value;
    }
    const absent = this.absent?.get(key);
    if (absent !== undefined) return absent;
    return this.loading.get(key) ?? this.load(key, load);
  }

  /** Drops the key's value and keeps out every load under way. */
  forget(key: string): void {
    this.values.delete(key);
    this.absent?.delete(key);
    this.generation += 1;
    this.loading.delete(key);
  }

  /** Drops every key the predicate picks (O(entries): for rare admin writes) and keeps out every load under way. */
  forgetWhere(predicate: (key: string) => boolean): void {
    this.generation += 1;
    this.values.deleteWhere(predicate);
    this.absent?.deleteWhere(predicate);
    for (const key of this.loading.keys()) {
      if (predicate(key)) this.loading.delete(key);
    }
  }

  private load(key: string, load: () => Promise<V>): Promise<V> {
    const loaded = this.read(key, load).finally(() => {
      if (this.loading.get(key) === loaded) this.loading.delete(key);
    });
    this.loading.set(key, loaded);
    return loaded;
  }

  private async read(key: string, load: () => Promise<V>): Promise<V> {
    const loadedAt = Date.now();
    const generation = this.generation;
    let value: V;
    try {
      value = await load();
    } catch (error) {
      const lastKnown = this.options.serveStaleOn?.(error) ? this.values.getStale(key) : undefined;
      const maxAge = this.options.staleMaxAgeMs ?? Number.POSITIVE_INFINITY;
      if (lastKnown && Date.now() - lastKnown.loadedAt <= maxAge) return lastKnown.value;
      throw error;
    }
    if (this.generation !== generation) return value;
    if (value === null && this.absent) {
      this.values.delete(key);
      this.absent.set(key, value, loadedAt);
    } else {
      this.values.set(key, { value, loadedAt }, loadedAt);
    }
    return value;
  }
}
