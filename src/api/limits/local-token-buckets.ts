import { LRUCache } from 'lru-cache';

/** What one fallback count answers: the same fields as a count in Redis (rate-limiter.ts). */
export interface LocalDecision {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Whole seconds until a refused request could pass (at least 1). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date, in `now()` milliseconds. */
  updatedAt: number;
}

export interface LocalTokenBucketsOptions {
  /** Most merchants with a bucket; past it the least recently counted merchant's bucket goes. */
  maxMerchants: number;
  /** Injected for tests; milliseconds on a monotonic clock. */
  now?: () => number;
}

/**
 * The rate limiter's fallback while Redis cannot count (rate-limiter.ts): one token bucket per merchant
 * in this process's memory. A bucket holds `limit` tokens and refills at `limit` per second, so a
 * merchant that has been quiet may send a burst of one second's worth, then `limit` a second, as with
 * the Redis window. Each API process counts on its own: with N replicas a merchant may get up to N times
 * its limit while Redis stalls; less would refuse honest traffic a load balancer spreads evenly.
 *
 * Bounded: at most `maxMerchants` buckets in an lru-cache, the least recently counted dropped first. A
 * dropped bucket comes back full, which only a merchant that was idle while `maxMerchants` others were
 * counted can notice.
 */
export class LocalTokenBuckets {
  private readonly buckets: LRUCache<string, Bucket>;
  private readonly now: () => number;

  constructor(options: LocalTokenBucketsOptions) {
    this.now = options.now ?? (() => performance.now());
    this.buckets = new LRUCache<string, Bucket>({ max: options.maxMerchants });
  }

  take(merchantId: string, limit: number): LocalDecision {
    const now = this.now();
    const bucket = this.buckets.get(merchantId);
    let tokens = limit;
    if (bucket) tokens = Math.min(limit, bucket.tokens + ((now - bucket.updatedAt) / 1_000) * limit);
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    this.buckets.set(merchantId, { tokens, updatedAt: now });
    const missing = allowed ? 0 : 1 - tokens;
    return {
      allowed,
      remaining: Math.floor(tokens),
      retryAfterSeconds: Math.max(1, Math.ceil(missing / limit)),
    };
  }

  /** Merchants with a bucket now (for tests and the bound). */
  get size(): number {
    return this.buckets.size;
  }
}
