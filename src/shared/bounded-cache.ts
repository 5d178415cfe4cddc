export interface BoundedCacheOptions<V> {
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
 * A least-recently-used cache bounded by entries and by bytes, with a time to live.
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
