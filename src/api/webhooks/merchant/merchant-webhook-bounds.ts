import { AppError } from '../../../shared/errors/errors.js';
import { webhookManualSendsKey } from '../../../shared/redis/redis-keys.js';
import { pendingCount } from '../../../shared/webhooks/webhook-pending.js';
import type { ApiDeps } from '../../context.js';

const MINUTE_MS = 60_000;

/**
 * The per-merchant bound of events sent on request (webhooks/redeliver, webhooks/test): at most
 * WEBHOOK_MANUAL_SENDS_PER_MINUTE a minute (a counter per minute in Redis), and none while the merchant's
 * pending events fill half its cap (a send on request must never push out an event waiting to be
 * delivered). Past either, 429 errorCode 7 with Retry-After.
 */
export async function chargeManualSend(
  deps: Pick<ApiDeps, 'redis' | 'shards' | 'config'>,
  merchantId: string,
): Promise<void> {
  const { redis, shards, config } = deps;
  if ((await pendingCount({ redis, shards }, merchantId)) >= Math.floor(config.WEBHOOK_MAX_PENDING_PER_MERCHANT / 2)) {
    throw new AppError('RATE_LIMITED', 'Too many webhook events are waiting to be delivered; try again later', {
      retryAfterSeconds: Math.ceil(config.WEBHOOK_TIMEOUT_MS / 1000),
    });
  }
  const now = Date.now();
  const window = Math.floor(now / MINUTE_MS);
  const key = webhookManualSendsKey(shards.merchantPrefix(merchantId), merchantId, window);
  const [[, count]] = (await redis
    .multi()
    .incr(key)
    .pexpireat(key, (window + 1) * MINUTE_MS)
    .exec()) as [[null, number], unknown];
  if (count > config.WEBHOOK_MANUAL_SENDS_PER_MINUTE) {
    throw new AppError(
      'RATE_LIMITED',
      `At most ${config.WEBHOOK_MANUAL_SENDS_PER_MINUTE} events sent on request a minute (redeliver and test)`,
      { retryAfterSeconds: Math.max(1, Math.ceil(((window + 1) * MINUTE_MS - now) / 1000)) },
    );
  }
}
