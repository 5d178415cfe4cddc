import { LoadingCache } from '../../shared/cache/loading-cache.js';
import { buildIpMatcher } from '../../shared/config/ip-ranges.js';
import type { Db, Executor } from '../../shared/db/client.js';
import { isDatabaseUnavailable } from '../../shared/db/database-errors.js';
import type { Merchant, MerchantStatus, SignatureVersion } from '../../shared/db/schema.js';
import { openStoredSecret, type SecretSealer } from '../../shared/secrets/secret-sealer.js';
import type { ReadRouter } from '../reads/read-router.js';

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
  /** true: the cancel and abort routes also require `X-Signature`, whatever signatureVersion says. */
  requireSignatureV2: boolean;
}

export interface MerchantDirectoryOptions {
  /** How long a record is reused; 0 switches caching off. */
  ttlMs: number;
  maxEntries: number;
  maxBytes: number;
  /** How long after it was read a record may still be used while Postgres is away (omitted: no limit). */
  staleMaxMs?: number;
  /** Lookups go through it when given: to the primary, and to the replica while the primary is down. */
  reads?: ReadRouter;
}

interface CachedMerchant {
  merchant: AuthenticatedMerchant;
  bytes: number;
}

/** The merchant's row as stored: what the directory caches, and what the admin API reads back. */
export async function findMerchantById(db: Executor, merchantId: string): Promise<Merchant | undefined> {
  return db.selectFrom('merchants').selectAll().where('id', '=', merchantId).executeTakeFirst();
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
  private readonly records: LoadingCache<CachedMerchant | null>;
  private readonly reads: ReadRouter | undefined;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretSealer,
    options: MerchantDirectoryOptions,
  ) {
    this.reads = options.reads;
    const unknownEntries = Math.max(1, Math.min(1_000, Math.floor(options.maxEntries / 10)));
    this.records = new LoadingCache<CachedMerchant | null>({
      ttlMs: options.ttlMs,
      maxEntries: options.maxEntries,
      maxBytes: options.maxBytes,
      sizeOf: (cached) => cached?.bytes ?? UNKNOWN_ID_BYTES,
      refreshAfterMs: options.ttlMs / 2,
      // Postgres away: a merchant this process has seen keeps its last known record, so its cancels
      // (which need only Redis) are still accepted during the outage. A change made meanwhile (a
      // disabled merchant, a rotated secret) applies once Postgres answers again, or once the record is
      // older than staleMaxMs: past that, the merchant's requests answer 503 like any unknown one's, so a
      // long outage cannot keep a revoked secret working.
      serveStaleOn: isDatabaseUnavailable,
      staleMaxAgeMs: options.staleMaxMs,
      absent: { maxEntries: unknownEntries, answer: null },
    });
  }

  async find(merchantId: string): Promise<AuthenticatedMerchant | null> {
    const key = merchantId.toLowerCase();
    const cached = await this.records.get(key, () => this.read(key));
    return cached?.merchant ?? null;
  }

  private async read(key: string): Promise<CachedMerchant | null> {
    // The primary, so that a merchant just created or changed is seen at once; the replica only while
    // the primary is down, so that lag-tolerant reads can still be authenticated.
    const row = this.reads
      ? await this.reads.readPrimaryFirst('merchant', (db) => findMerchantById(db, key))
      : await findMerchantById(this.db, key);
    return row ? { merchant: toAuthenticatedMerchant(row, this.secrets, Date.now()), bytes: recordBytes(row) } : null;
  }

  /** Called by the admin API after it changes a merchant, so this process sees the change at once. */
  forget(merchantId: string): void {
    this.records.forget(merchantId.toLowerCase());
  }
}

/**
 * The record with its secrets opened: sealed at rest, held opened in this process's memory (the key
 * ring is there anyway). A previous secret already expired is not opened at all. A secret that does not
 * open throws (SecretUnreadableError): the request fails with 500 and an error log, the merchant cannot
 * authenticate, and nothing falls back to reading the stored text as the secret.
 */
function toAuthenticatedMerchant(row: Merchant, secrets: SecretSealer, now: number): AuthenticatedMerchant {
  const previousValidUntil = row.previous_secret_valid_until?.getTime() ?? null;
  const previousInForce = row.previous_secret_key !== null && previousValidUntil !== null && previousValidUntil > now;
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    secretKey: openStoredSecret(secrets, row.secret_key, row.id, 'merchants.secret_key'),
    previousSecretKey: previousInForce
      ? openStoredSecret(secrets, row.previous_secret_key as string, row.id, 'merchants.previous_secret_key')
      : null,
    previousSecretValidUntil: previousInForce ? previousValidUntil : null,
    isAllowedSource: row.allowed_ips ? buildIpMatcher(row.allowed_ips) : null,
    rateLimitPerSecond: row.rate_limit_per_second,
    maxQueuedJobs: row.max_queued_jobs,
    signatureVersion: row.signature_version,
    requireSignatureV2: row.require_signature_v2,
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
