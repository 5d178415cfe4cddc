import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Counter } from 'prom-client';
import { noAnswerWithin, withDeadline } from '../../shared/process/deadline.js';
import { rateLimitKey } from '../../shared/redis/redis-keys.js';
import type { ShardLayout } from '../../shared/redis/shards.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { LocalTokenBuckets } from './local-token-buckets.js';

/** Length of a counting window: the limits are requests per second (RATE_LIMIT_PER_SECOND). */
const WINDOW_MS = 1_000;
/** While Redis cannot count, one warning per this long (with how many requests were counted locally). */
const WARN_EVERY_MS = 10_000;

/**
 * One counter per merchant, counting the requests of a one-second window. The first request after a
 * window ended opens the next one: it creates the key with a one-second expiry, and the key's
 * remaining life is the time until the window resets. So Redis's clock alone decides the windows
 * (API replicas with drifting clocks still share them), and the script touches one key only, which
 * a Redis Cluster accepts. As with any fixed window, a burst at the end of one window and the start
 * of the next can reach twice the limit within one second; the limit guards the service against
 * floods, it is not a billing count.
 */
const TAKE_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;
const TAKE_SCRIPT_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');

export interface RateLimitDecision {
  allowed: boolean;
  /** Requests per window. */
  limit: number;
  /** Requests left in the current window. */
  remaining: number;
  /** Whole seconds until the window resets; also the Retry-After of a refusal. */
  resetSeconds: number;
}

export interface RateLimiterDeps {
  redis: Redis | Cluster;
  /** Where each merchant's keys live: its counter is under its queue shard prefix (redis-keys.ts, shards.ts). */
  layout: ShardLayout;
  /** How long a request waits for Redis to count it before the local bucket counts it instead. */
  timeoutMs: number;
  /** The per-process buckets that count while Redis cannot. */
  fallback: LocalTokenBuckets;
  /** Counts each request the fallback counted, by why (`gateway_rate_limit_fallback_total`). */
  fallbackCounter: Counter<'reason'>;
  logger: Logger;
}

/**
 * Per-merchant request rate, counted in Redis so that every API replica draws on one budget.
 *
 * When Redis does not answer within `timeoutMs` (down, failing over, overloaded: often because a flood
 * is loading it) or answers with an error, this process counts the merchant in a token bucket of its
 * own (local-token-buckets.ts) with the same limit, and answers the same headers. Never no limit: a
 * limiter that opens when Redis is slow opens exactly when a flood needs it closed. Nor a wait or a
 * 503: reads that need no Redis at all keep being served, within the limit.
 */
export class RateLimiter {
  private fallbacksSinceWarning = 0;
  private lastWarnAt = 0;

  constructor(private readonly deps: RateLimiterDeps) {}

  /** Counts one request of the merchant against `limit` requests per second. */
  async take(merchantId: string, limit: number): Promise<RateLimitDecision> {
    const { layout, timeoutMs } = this.deps;
    const key = rateLimitKey(layout.merchantPrefix(merchantId), merchantId);
    let timedOut = false;
    try {
      const [count, ttlMs] = await withDeadline(this.runScript(key), timeoutMs, () => {
        timedOut = true;
        return noAnswerWithin(timeoutMs);
      });
      const resetSeconds = Math.max(1, Math.ceil(ttlMs / 1_000));
      return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetSeconds };
    } catch (error) {
      return this.countLocally(merchantId, limit, timedOut ? 'timeout' : 'error', error);
    }
  }

  private countLocally(
    merchantId: string,
    limit: number,
    reason: 'timeout' | 'error',
    error: unknown,
  ): RateLimitDecision {
    this.deps.fallbackCounter.inc({ reason });
    this.warnFallback(error);
    const local = this.deps.fallback.take(merchantId, limit);
    return { allowed: local.allowed, limit, remaining: local.remaining, resetSeconds: local.retryAfterSeconds };
  }

  private async runScript(key: string): Promise<[number, number]> {
    const { redis } = this.deps;
    try {
      return (await redis.evalsha(TAKE_SCRIPT_SHA, 1, key, WINDOW_MS)) as [number, number];
    } catch (error) {
      // Redis forgets scripts on restart (or SCRIPT FLUSH): send it once in full, cached again from then on.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return (await redis.eval(TAKE_SCRIPT, 1, key, WINDOW_MS)) as [number, number];
    }
  }

  private warnFallback(error: unknown): void {
    this.fallbacksSinceWarning += 1;
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_EVERY_MS) return;
    this.deps.logger.warn(
      { err: error, locallyCountedRequests: this.fallbacksSinceWarning },
      'rate limit counted by this process: Redis did not answer in time',
    );
    this.lastWarnAt = now;
    this.fallbacksSinceWarning = 0;
  }
}

/** The name of the one quota a merchant has, in the IETF fields (a policy's name is the client's key to it). */
const POLICY_NAME = '"default"';

/**
 * The headers every answer to a rate-limited merchant carries: the IETF fields
 * (draft-ietf-httpapi-ratelimit-headers-10: `RateLimit-Policy` names the quota `q` per window `w` in
 * seconds, `RateLimit` what is left of it `r` and the seconds `t` until it resets), beside the older
 * `RateLimit-Limit` / `-Remaining` / `-Reset` that existing clients read (deprecated, kept as they were).
 */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'RateLimit-Policy': `${POLICY_NAME};q=${decision.limit};w=${WINDOW_MS / 1_000}`,
    RateLimit: `${POLICY_NAME};r=${decision.remaining};t=${decision.resetSeconds}`,
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
}
