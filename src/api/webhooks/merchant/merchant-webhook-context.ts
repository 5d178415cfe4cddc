import { z } from '@hono/zod-openapi';
import { AppError } from '../../../shared/errors/errors.js';
import type { QueueingDeps } from '../../../shared/webhooks/webhook-queueing.js';
import { findWebhookStatus, type WebhookStatus } from '../../../shared/webhooks/webhooks.repository.js';
import type { ApiDeps } from '../../context.js';
import { errorResponse, merchantErrorResponses, signedFields } from '../../http/schemas.js';

/**
 * What the merchant's webhook routes (webhooks/*) share: their path, their tag, their error answers, the
 * event id as the merchant knows it (the `webhook-id` header, `msg_<uuid>`), and the endpoint a send
 * needs.
 */

export const webhooksPath = (name: string) => `/api/v1/integration/webhooks/${name}`;
export const webhooksTag = 'Webhooks';
export { signedFields };

export const webhookErrorResponses = {
  ...merchantErrorResponses,
  409: errorResponse('CONFLICT (13): no webhook endpoint is set (webhooks/put sets one), or it is disabled'),
} as const;

export const webhookNotFound = errorResponse("NOT_FOUND (10): no such event of this merchant's within the retention");

// A pattern rather than a refinement, so that the OpenAPI document states it.
const EVENT_ID = /^(msg_)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** An event id as `webhook-id` carries it (`msg_<uuid>`) or as the bare uuid. */
export const eventIdSchema = z.string().regex(EVENT_ID, 'an event id: msg_<uuid> as in the webhook-id header').openapi({
  description: 'The `webhook-id` of the event (`msg_<uuid>`)',
  example: 'msg_1b4e28ba-2fa1-8a1d-a0a2-c6f1e2c3d4e5',
});

/** The row id of an event id as the merchant gave it. */
export function eventRowId(eventId: string): string {
  return eventId.replace(/^msg_/, '').toLowerCase();
}

/** The merchant's endpoint, enabled: what a send needs (409 otherwise). */
export async function requireEnabledEndpoint(deps: Pick<ApiDeps, 'db'>, merchantId: string): Promise<WebhookStatus> {
  const webhook = await findWebhookStatus(deps.db, merchantId);
  if (!webhook) throw new AppError('CONFLICT', 'No webhook endpoint is set: set one with webhooks/put');
  if (webhook.disabledAt) {
    throw new AppError(
      'CONFLICT',
      `The webhook endpoint is disabled (${webhook.disabledReason ?? 'failing'}): set it again with webhooks/put`,
    );
  }
  return webhook;
}

/** The API process's own connections and the webhooks queue, as queueing an event needs them. */
export function queueingDeps(deps: ApiDeps): QueueingDeps {
  return {
    config: deps.config,
    db: deps.db,
    logger: deps.logger,
    metrics: deps.metrics,
    redis: deps.redis,
    shards: deps.shards,
    queue: deps.producer.queues.webhooks,
  };
}

/** Nothing older than the retention is the merchant's to see or send again. */
export function retentionStart(deps: Pick<ApiDeps, 'config'>): Date {
  return new Date(Date.now() - deps.config.RETENTION_MS);
}
