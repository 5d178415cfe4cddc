import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { noAnswerWithin, withDeadline } from '../shared/deadline.js';
import type { Logger } from '../shared/logger.js';
import { rateLimitKey } from '../shared/queue/redis-keys.js';

/** Length of a counting window. */
const WINDOW_MS = 1_000;
/** While Redis cannot count, one warning per this long (with how many requests went uncounted). */
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
  /** Requests left in the current window (the full limit when Redis could not count). */
  remaining: number;
  /** Whole seconds until the window resets; also the Retry-After of a refusal. */
  resetSeconds: number;
}

/**
 * Per-merchant request rate, counted in Redis so that every API replica draws on one budget.
 *
 * Fails open: when Redis does not answer within `timeoutMs` (down, failing over, overloaded) the
 * request goes through uncounted. A limit that cannot be counted must not become an outage of reads
 * that need no Redis at all.
 */
export class RateLimiter {
  private uncounted = 0;
  private lastWarnAt = 0;

  constructor(
    private readonly redis: Redis | Cluster,
    /** The queue prefix: the counters' keys are built from it (redis-keys.ts). */
    private readonly keyPrefix: string,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
  ) {}

  /** Counts one request of the merchant against `limit` requests per second. */
  async take(merchantId: string, limit: number): Promise<RateLimitDecision> {
    const key = rateLimitKey(this.keyPrefix, merchantId);
    try {
      const [count, ttlMs] = await withDeadline(this.runScript(key), this.timeoutMs, () =>
        noAnswerWithin(this.timeoutMs),
      );
      const resetSeconds = Math.max(1, Math.ceil(ttlMs / 1_000));
      return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetSeconds };
    } catch (error) {
      this.warnUncounted(error);
      return { allowed: true, limit, remaining: limit, resetSeconds: 1 };
    }
  }

  private async runScript(key: string): Promise<[number, number]> {
    try {
      return (await this.redis.evalsha(TAKE_SCRIPT_SHA, 1, key, WINDOW_MS)) as [number, number];
    } catch (error) {
      // Redis forgets scripts on restart (or SCRIPT FLUSH): send it once in full, cached again from then on.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return (await this.redis.eval(TAKE_SCRIPT, 1, key, WINDOW_MS)) as [number, number];
    }
  }

  private warnUncounted(error: unknown): void {
    this.uncounted += 1;
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_EVERY_MS) return;
    this.logger.warn(
      { err: error, uncountedRequests: this.uncounted },
      'rate limit not counted: Redis did not answer, requests let through',
    );
    this.lastWarnAt = now;
    this.uncounted = 0;
  }
}

/** The headers every answer to a rate-limited merchant carries. */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
}
