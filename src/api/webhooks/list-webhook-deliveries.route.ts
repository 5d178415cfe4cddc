import { createRoute, z } from '@hono/zod-openapi';
import { webhookDeliveryStates } from '../../shared/db/schema.js';
import {
  type AnyWebhookEventType,
  allWebhookEventTypes,
  webhookMessageId,
} from '../../shared/webhooks/webhook-catalogue.js';
import { listWebhookDeliveries } from '../../shared/webhooks/webhooks.repository.js';
import type { App } from '../context.js';
import { adminErrorResponses } from '../http/schemas.js';
import { adminRouteMeta, MerchantIdParamsSchema, requireMerchant } from '../merchants/admin-schemas.js';

/** The list is for looking at, not for paging through: the latest ones are what an operator needs. */
const MAX_LISTED = 100;

const epochMs = (description: string) => z.number().int().nullable().openapi({ description });

const WebhookDeliverySchema = z
  .object({
    eventId: z.string().openapi({
      description: 'The `webhook-id` header of every attempt of this event',
      example: 'msg_1b4e28ba-2fa1-8a1d-a0a2-c6f1e2c3d4e5',
    }),
    type: z.enum(allWebhookEventTypes),
    jobId: z.string(),
    state: z.enum(webhookDeliveryStates).openapi({
      description:
        'pending (not sent yet, or waiting for a retry), delivered (a 2xx), failed (given up or refused), dropped ' +
        "(given up unsent: the merchant's pending cap, or its endpoint disabled; lastError says which)",
    }),
    attempts: z.number().int(),
    lastStatus: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'HTTP status of the last attempt; null: no answer' }),
    lastError: z.string().nullable().openapi({ description: 'Why the last attempt failed' }),
    nextAttemptAt: epochMs('Epoch milliseconds of the next attempt; null when none is planned'),
    deliveredAt: epochMs('Epoch milliseconds'),
    createdAt: z.number().int().openapi({ description: 'Epoch milliseconds: when the job finished' }),
  })
  .openapi('AdminWebhookDelivery');

const DeliveriesSchema = z
  .object({
    deliveries: z.array(WebhookDeliverySchema).openapi({ description: `Newest first, at most ${MAX_LISTED}` }),
  })
  .openapi('AdminWebhookDeliveries');

export function registerListWebhookDeliveries(app: App): void {
  const route = createRoute({
    method: 'get',
    path: '/admin/v1/merchants/{merchantId}/webhook/deliveries',
    operationId: 'adminListWebhookDeliveries',
    ...adminRouteMeta,
    summary: "A merchant's latest webhook deliveries and their outcome",
    request: { params: MerchantIdParamsSchema },
    responses: {
      200: { description: 'The deliveries', content: { 'application/json': { schema: DeliveriesSchema } } },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const merchantId = c.req.valid('param').merchantId.toLowerCase();
    await requireMerchant(c.get('deps').db, merchantId);
    const rows = await listWebhookDeliveries(c.get('deps').db, merchantId, MAX_LISTED);
    const deliveries = rows.map((row) => ({
      eventId: webhookMessageId(row.eventId),
      type: row.type as AnyWebhookEventType,
      jobId: row.jobId,
      state: row.state,
      attempts: row.attempts,
      lastStatus: row.lastStatus,
      lastError: row.lastError,
      nextAttemptAt: row.nextAttemptAt?.getTime() ?? null,
      deliveredAt: row.deliveredAt?.getTime() ?? null,
      createdAt: row.createdAt.getTime(),
    }));
    return c.json({ deliveries }, 200);
  });
}
