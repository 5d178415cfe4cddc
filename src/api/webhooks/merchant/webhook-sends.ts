import { randomUUID } from 'node:crypto';
import { AppError } from '../../../shared/errors/errors.js';
import { webhookMessageId, webhookTestEventType } from '../../../shared/webhooks/webhook-catalogue.js';
import { reopenDelivery } from '../../../shared/webhooks/webhook-delivery-log.repository.js';
import { webhookTestBody } from '../../../shared/webhooks/webhook-events.js';
import { queueWebhookEvent, resendWebhookEvent } from '../../../shared/webhooks/webhook-queueing.js';
import { recordWebhookEvent } from '../../../shared/webhooks/webhooks.repository.js';
import type { ApiDeps } from '../../context.js';
import type { RequestLog } from '../../http/request-logger.js';
import { chargeManualSend } from './merchant-webhook-bounds.js';
import { eventRowId, queueingDeps, requireEnabledEndpoint, retentionStart } from './merchant-webhook-context.js';

/**
 * The events a merchant has sent on request, for the signed API (webhooks/redeliver, webhooks/test) and
 * the portal alike: the endpoint must be set and enabled (409), and both count against the same bound
 * per minute (merchant-webhook-bounds.ts, 429).
 */

/** Sends one of the merchant's events again: one new attempt, the same webhook-id. 404 for another's. */
export async function redeliverWebhookEvent(
  deps: ApiDeps,
  merchantId: string,
  eventId: string,
  logger: RequestLog,
): Promise<{ eventId: string }> {
  const rowId = eventRowId(eventId);
  await requireEnabledEndpoint(deps, merchantId);
  await chargeManualSend(deps, merchantId);
  const delivery = await reopenDelivery(deps.db, merchantId, rowId, retentionStart(deps));
  // Another merchant's event is as unknown as one that never was.
  if (!delivery) throw new AppError('NOT_FOUND', 'Event not found');
  await resendWebhookEvent(queueingDeps(deps), merchantId, delivery, { attempts: 1 });
  logger.info({ merchantId, eventId: rowId }, 'webhook event sent again on request');
  return { eventId: webhookMessageId(rowId) };
}

/** Sends a `webhook.test` event to the merchant's endpoint, signed, retried and logged like every event. */
export async function sendWebhookTestEvent(deps: ApiDeps, merchantId: string): Promise<{ eventId: string }> {
  await requireEnabledEndpoint(deps, merchantId);
  await chargeManualSend(deps, merchantId);
  const eventId = randomUUID();
  const event = { eventId, merchantId, type: webhookTestEventType, jobId: '', body: webhookTestBody(merchantId) };
  // Recorded before it is queued: the log lists it from this answer on.
  await recordWebhookEvent(deps.db, { ...event, id: eventId });
  await queueWebhookEvent(queueingDeps(deps), event);
  return { eventId: webhookMessageId(eventId) };
}
