import { BoundedCache } from '../shared/bounded-cache.js';
import { isDatabaseUnavailable } from '../shared/database-errors.js';
import type { Db } from '../shared/db/client.js';
import type { Merchant, MerchantStatus, SignatureVersion } from '../shared/db/schema.js';
import { buildIpMatcher } from '../shared/ip-ranges.js';
import { findMerchantById } from '../shared/repositories/merchants.repository.js';

export interface AuthenticatedMerchant {
  id: string;
  name: string;
  status: MerchantStatus;
  secretKey: string;
  previousSecretKey: string | null;
  previousSecretValidUntil: number | null;
  /** null: any source address is allowed. */
  isAllowedSource: ((address: string) => boolean) | null;
  /** Requests per second across all API replicas; null: RATE_LIMIT_PER_SECOND. */
  rateLimitPerSecond: number | null;
  /** Bulk jobs queued or running at once; null: MAX_QUEUED_JOBS. */
  maxQueuedJobs: number | null;
  /** 2: every request must also carry the body-bound `X-Signature` header. */
  signatureVersion: SignatureVersion;
}

export interface MerchantDirectoryOptions {
  /** How long a record is reused; 0 switches caching off. */
  ttlMs: number;
  maxEntries: number;
  maxBytes: number;
}

interface CachedMerchant {
  merchant: AuthenticatedMerchant;
  bytes: number;
  /** When the record was read (epoch ms). */
  loadedAt: number;
}

/** An id that names no merchant costs its key and the bookkeeping around it. */
const UNKNOWN_ID_BYTES = 200;
/** Rough per-record cost beside its strings: the object, the matcher closure, the map entry. */
const RECORD_OVERHEAD_BYTES = 512;

/**
 * Merchant records as authentication needs them, cached for a few seconds: a signed request would
 * otherwise cost one more database round trip. The cache bounds how long a disabled merchant, a new
 * allow-list, a rotated secret or a new quota takes to apply (MERCHANT_CACHE_TTL_MS, 0 switches it
 * off).
 *
 * Ids that name no merchant are remembered apart, in a small cache of their own: a caller sending
 * made-up ids only ever evicts other made-up ids, never the records of real merchants. (Each new
 * made-up id still costs one primary-key lookup; remembering them only spares repeats.)
 * Keys are lower-cased: a UUID is the same merchant whatever the case it is written in.
 *
 * Concurrent misses for one id share one lookup, and a record older than half the TTL is served
 * while one reload runs in the background (refresh ahead): a merchant that keeps sending is never
 * held up by its own record's expiry, also while bulk work keeps Postgres busy. A record is still
 * never used longer than the TTL after it was read.
 */
export class MerchantDirectory {
  private readonly known: BoundedCache<CachedMerchant>;
  private readonly unknown: BoundedCache<true>;
  /** Lookups under way, one per id. */
  private readonly loading = new Map<string, Promise<AuthenticatedMerchant | null>>();
  /** Bumped by every `forget`: a lookup that began before it may hold the old record, so it is not kept. */
  private generation = 0;
  private readonly ttlMs: number;

  constructor(
    private readonly db: Db,
    options: MerchantDirectoryOptions,
  ) {
    this.ttlMs = options.ttlMs;
    this.known = new BoundedCache({
      ttlMs: options.ttlMs,
      maxEntries: options.maxEntries,
      maxBytes: options.maxBytes,
      sizeOf: (cached) => cached.bytes,
      keepExpired: true,
    });
    const unknownEntries = Math.max(1, Math.min(1_000, Math.floor(options.maxEntries / 10)));
    this.unknown = new BoundedCache({
      ttlMs: options.ttlMs,
      maxEntries: unknownEntries,
      maxBytes: unknownEntries * UNKNOWN_ID_BYTES,
      sizeOf: () => UNKNOWN_ID_BYTES,
    });
  }

  async find(merchantId: string): Promise<AuthenticatedMerchant | null> {
    const key = merchantId.toLowerCase();
    const cached = this.known.get(key);
    if (cached) {
      if (Date.now() - cached.loadedAt >= this.ttlMs / 2 && !this.loading.has(key)) {
        // A failed reload leaves the record to expire; the next miss then meets the error.
        this.load(key).catch(() => {});
      }
      return cached.merchant;
    }
    if (this.unknown.get(key)) return null;
    return this.loading.get(key) ?? this.load(key);
  }

  private load(key: string): Promise<AuthenticatedMerchant | null> {
    const loaded = this.read(key).finally(() => {
      if (this.loading.get(key) === loaded) this.loading.delete(key);
    });
    this.loading.set(key, loaded);
    return loaded;
  }

  private async read(key: string): Promise<AuthenticatedMerchant | null> {
    const loadedAt = Date.now();
    const generation = this.generation;
    let row: Merchant | undefined;
    try {
      row = await findMerchantById(this.db, key);
    } catch (error) {
      // Postgres away: a merchant this process has seen keeps its last known record, so its cancels
      // (which need only Redis) are still accepted during the outage. A change made meanwhile (a
      // disabled merchant, a rotated secret) applies once Postgres answers again.
      const lastKnown = isDatabaseUnavailable(error) ? this.known.getStale(key) : undefined;
      if (lastKnown) return lastKnown.merchant;
      throw error;
    }
    const current = this.generation === generation;
    if (!row) {
      if (current) {
        this.known.delete(key);
        this.unknown.set(key, true, loadedAt);
      }
      return null;
    }
    const merchant = toAuthenticatedMerchant(row);
    if (current) this.known.set(key, { merchant, bytes: recordBytes(row), loadedAt }, loadedAt);
    return merchant;
  }

  /** Called by the admin API after it changes a merchant, so this process sees the change at once. */
  forget(merchantId: string): void {
    const key = merchantId.toLowerCase();
    this.known.delete(key);
    this.unknown.delete(key);
    this.generation += 1;
    this.loading.delete(key);
  }
}

function toAuthenticatedMerchant(row: Merchant): AuthenticatedMerchant {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    secretKey: row.secret_key,
    previousSecretKey: row.previous_secret_key,
    previousSecretValidUntil: row.previous_secret_valid_until?.getTime() ?? null,
    isAllowedSource: row.allowed_ips ? buildIpMatcher(row.allowed_ips) : null,
    rateLimitPerSecond: row.rate_limit_per_second,
    maxQueuedJobs: row.max_queued_jobs,
    signatureVersion: row.signature_version,
  };
}

/** An estimate that grows with what the caller controls: the name, the secrets and the allow-list. */
function recordBytes(row: Merchant): number {
  const ranges = row.allowed_ips ?? [];
  // Each range is held twice: as text, and parsed inside the matcher.
  const rangeBytes = ranges.reduce((sum, range) => sum + 2 * range.length + 64, 0);
  return (
    RECORD_OVERHEAD_BYTES +
    row.id.length +
    row.name.length +
    row.secret_key.length +
    (row.previous_secret_key?.length ?? 0) +
    rangeBytes
  );
}
