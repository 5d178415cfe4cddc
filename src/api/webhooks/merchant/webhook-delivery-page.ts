import type { WebhookDeliveryState } from '../../../shared/db/schema.js';
import { AppError } from '../../../shared/errors/errors.js';
import { type AnyWebhookEventType, webhookMessageId } from '../../../shared/webhooks/webhook-catalogue.js';
import { listDeliveryPage } from '../../../shared/webhooks/webhook-delivery-log.repository.js';
import { findWebhookStatus } from '../../../shared/webhooks/webhooks.repository.js';
import type { ApiDeps } from '../../context.js';
import { webhookStatusAnswer } from '../webhook-settings.js';
import { eventRowId, retentionStart } from './merchant-webhook-context.js';

/**
 * What a merchant reads of its webhook, for the signed API (webhooks/get, webhooks/deliveries) and the
 * portal alike: the endpoint (never its secret) and the delivery log with its attempts.
 */

export interface DeliveriesQuery {
  /** The `next` of the previous page (an event id). */
  after?: string;
  limit: number;
  status?: WebhookDeliveryState;
  type?: AnyWebhookEventType;
  jobId?: string;
}

/** One page of the merchant's delivery log, newest first, over the retention. */
export async function webhookDeliveriesPage(
  deps: Pick<ApiDeps, 'db' | 'config'>,
  merchantId: string,
  query: DeliveriesQuery,
) {
  const rows = await listDeliveryPage(deps.db, merchantId, {
    ...(query.after === undefined ? {} : { afterEventId: eventRowId(query.after) }),
    limit: query.limit + 1,
    ...(query.status ? { state: query.status } : {}),
    ...(query.type ? { type: query.type } : {}),
    ...(query.jobId === undefined ? {} : { jobId: query.jobId }),
    notBefore: retentionStart(deps),
  });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    deliveries: page.map((row) => ({
      eventId: webhookMessageId(row.eventId),
      type: row.type,
      jobId: row.jobId === '' ? null : row.jobId,
      state: row.state,
      lastError: row.lastError,
      nextAttemptAt: row.nextAttemptAt?.getTime() ?? null,
      deliveredAt: row.deliveredAt?.getTime() ?? null,
      createdAt: row.createdAt.getTime(),
      attempts: row.attempts.map((attempt) => ({
        at: attempt.at.getTime(),
        status: attempt.status,
        durationMs: attempt.durationMs,
        error: attempt.error,
      })),
    })),
    next: rows.length > query.limit && last ? webhookMessageId(last.eventId) : null,
  };
}

/** The merchant's webhook endpoint and whether it is enabled, or 404 when none is set. */
export async function readWebhookEndpoint(deps: Pick<ApiDeps, 'db'>, merchantId: string) {
  const webhook = await findWebhookStatus(deps.db, merchantId);
  if (!webhook) throw new AppError('NOT_FOUND', 'No webhook endpoint is set');
  return webhookStatusAnswer(webhook);
}
