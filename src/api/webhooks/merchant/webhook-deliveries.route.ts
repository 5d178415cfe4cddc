import { createRoute, z } from '@hono/zod-openapi';
import { webhookDeliveryStates } from '../../../shared/db/schema.js';
import { allWebhookEventTypes } from '../../../shared/webhooks/webhook-catalogue.js';
import { MAX_ATTEMPTS_SHOWN } from '../../../shared/webhooks/webhook-delivery-log.repository.js';
import { jobIdSchema } from '../../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../../auth/merchant-auth.middleware.js';
import type { App } from '../../context.js';
import { jsonBody } from '../../http/schemas.js';
import {
  eventIdSchema,
  signedFields,
  webhookErrorResponses,
  webhooksPath,
  webhooksTag,
} from './merchant-webhook-context.js';
import { webhookDeliveriesPage } from './webhook-delivery-page.js';

const MAX_PAGE = 100;

const RequestSchema = z
  .strictObject({
    ...signedFields,
    after: eventIdSchema
      .optional()
      .openapi({ description: 'The `next` of the previous page (an event id); absent for the first (newest) page' }),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE)
      .default(20)
      .openapi({ description: `1 to ${MAX_PAGE}, default 20` }),
    status: z.enum(webhookDeliveryStates).optional().openapi({ description: 'Only deliveries in this state' }),
    type: z.enum(allWebhookEventTypes).optional(),
    jobId: jobIdSchema().uuid().optional().openapi({ description: 'Only the events about this job' }),
  })
  .openapi('WebhookDeliveriesRequest');

const AttemptSchema = z.object({
  at: z.number().int().openapi({ description: 'Epoch milliseconds: when the attempt was sent' }),
  status: z.number().int().nullable().openapi({ description: "Your endpoint's HTTP status; null: no answer" }),
  durationMs: z.number().int().openapi({ description: 'From sending to the answer (or to giving up)' }),
  error: z.string().nullable().openapi({ description: 'Why no answer came (timeout, connection refused, …)' }),
});

const DeliverySchema = z.object({
  eventId: z
    .string()
    .openapi({ description: 'The `webhook-id` of every attempt', example: 'msg_1b4e28ba-2fa1-8a1d-a0a2-c6f1e2c3d4e5' }),
  type: z.enum(allWebhookEventTypes),
  jobId: z.string().nullable().openapi({ description: 'The job the event is about; null for webhook.test' }),
  state: z.enum(webhookDeliveryStates).openapi({
    description:
      'pending (not sent yet, or waiting for a retry), delivered (a 2xx), failed (given up), dropped (not sent: ' +
      'too many pending, or the endpoint disabled; webhooks/recover sends it)',
  }),
  lastError: z.string().nullable(),
  nextAttemptAt: z.number().int().nullable().openapi({ description: 'Epoch milliseconds; null when none is planned' }),
  deliveredAt: z.number().int().nullable().openapi({ description: 'Epoch milliseconds' }),
  createdAt: z.number().int().openapi({ description: 'Epoch milliseconds: when the event happened' }),
  attempts: z.array(AttemptSchema).openapi({ description: `Oldest first; the latest ${MAX_ATTEMPTS_SHOWN} at most` }),
});

const AnswerSchema = z
  .object({
    deliveries: z.array(DeliverySchema).openapi({ description: 'Newest first' }),
    next: z.string().nullable().openapi({ description: 'Pass as `after` for the next page; null: no more' }),
  })
  .openapi('WebhookDeliveries');

export function registerWebhookDeliveries(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: webhooksPath('deliveries'),
    operationId: 'listWebhookDeliveries',
    tags: [webhooksTag],
    summary: 'Your webhook delivery log: each event, its outcome and its attempts',
    description:
      'Keyset pages, newest first, over the retention (30 days by default). Filters combine: status, type, jobId.',
    middleware: auth,
    request: { body: jsonBody(RequestSchema) },
    responses: {
      200: { description: 'A page of deliveries', content: { 'application/json': { schema: AnswerSchema } } },
      ...webhookErrorResponses,
    },
  });
  app.openapi(route, async (c) => {
    const { merchantId: _merchantId, timestamp: _timestamp, hash: _hash, ...query } = c.req.valid('json');
    return c.json(await webhookDeliveriesPage(c.get('deps'), c.get('merchant').id, query), 200);
  });
}
