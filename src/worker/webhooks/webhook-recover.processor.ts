import { DelayedError, type Job } from 'bullmq';
import { webhookRecoverJobSchema } from '../../shared/webhooks/webhook-catalogue.js';
import { reopenUndelivered } from '../../shared/webhooks/webhook-delivery-log.repository.js';
import { pendingCount } from '../../shared/webhooks/webhook-pending.js';
import { type QueueingDeps, resendWebhookEvent } from '../../shared/webhooks/webhook-queueing.js';
import { findWebhookStatus } from '../../shared/webhooks/webhooks.repository.js';

/** Events queued again per round of a recovery. */
const RECOVER_BATCH = 100;
/** The pause between rounds: a month of events is queued at most RECOVER_BATCH a second. */
const RECOVER_PAUSE_MS = 1_000;

/**
 * One round of a merchant's recovery (webhooks/recover): the next events it did not get, oldest first,
 * set pending again and queued, never more than leaves half of the merchant's pending cap for new events
 * (so a recovery never pushes out an event, and the merchant's delivery slots pace the sends). The cursor
 * is kept on the job (updateData) and the job goes back to the delayed set until the next round, without
 * using an attempt; it ends when a round finds fewer events than it had room for. A webhook removed or
 * disabled meanwhile ends it.
 */
export async function processWebhookRecover(deps: QueueingDeps, job: Job, token: string | undefined): Promise<string> {
  const data = webhookRecoverJobSchema.parse(job.data);
  const webhook = await findWebhookStatus(deps.db, data.merchantId);
  if (!webhook) return `stopped after ${data.queued}: webhook removed`;
  if (webhook.disabledAt) return `stopped after ${data.queued}: endpoint disabled`;
  if (!token) throw new Error('a recovery round needs its token to wait for the next one');

  const room = Math.min(
    RECOVER_BATCH,
    Math.floor(deps.config.WEBHOOK_MAX_PENDING_PER_MERCHANT / 2) - (await pendingCount(deps, data.merchantId)),
  );
  if (room <= 0) {
    await job.moveToDelayed(Date.now() + deps.config.WEBHOOK_TIMEOUT_MS, token);
    throw new DelayedError('recovery waits: the merchant has many events pending');
  }
  const batch = await reopenUndelivered(deps.db, data.merchantId, {
    since: new Date(data.since),
    until: new Date(data.until),
    types: webhook.events,
    ...(data.after ? { after: data.after } : {}),
    limit: room,
  });
  for (const delivery of batch) await resendWebhookEvent(deps, data.merchantId, delivery);
  const queued = data.queued + batch.length;
  const last = batch.at(-1);
  if (batch.length < room || !last) {
    deps.logger.info({ merchantId: data.merchantId, queued }, 'webhook recovery done');
    return `recovered ${queued}`;
  }
  await job.updateData({ ...data, after: last.cursor, queued });
  await job.moveToDelayed(Date.now() + RECOVER_PAUSE_MS, token);
  throw new DelayedError('recovery paced: the next round follows');
}
