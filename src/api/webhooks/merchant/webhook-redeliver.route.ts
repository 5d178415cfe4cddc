import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../../shared/errors.js';
import { webhookMessageId } from '../../../shared/webhooks/webhook-catalogue.js';
import { reopenDelivery } from '../../../shared/webhooks/webhook-delivery-log.repository.js';
import { resendWebhookEvent } from '../../../shared/webhooks/webhook-queueing.js';
import type { App } from '../../context.js';
import type { MerchantRouteMiddleware } from '../../middleware/merchant-auth.middleware.js';
import { jsonBody } from '../../schemas.js';
import { chargeManualSend } from './merchant-webhook-bounds.js';
import {
  eventIdSchema,
  eventRowId,
  queueingDeps,
  requireEnabledEndpoint,
  retentionStart,
  signedFields,
  webhookErrorResponses,
  webhookNotFound,
  webhooksPath,
  webhooksTag,
} from './merchant-webhook-context.js';

const RequestSchema = z.strictObject({ ...signedFields, eventId: eventIdSchema }).openapi('WebhookRedeliverRequest');
const AnswerSchema = z
  .object({ eventId: z.string().openapi({ description: 'The `webhook-id` the attempt carries' }) })
  .openapi('WebhookRedelivered');

export function registerWebhookRedeliver(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: webhooksPath('redeliver'),
    operationId: 'redeliverWebhookEvent',
    tags: [webhooksTag],
    summary: 'Send one event again, whatever its outcome was: one new attempt, the same webhook-id',
    description:
      'The attempt is queued at once (the log shows it as pending until it has an answer); it is not retried. ' +
      'Sends on request (this and webhooks/test) are bounded per minute: 429 past it.',
    middleware: auth,
    request: { body: jsonBody(RequestSchema) },
    responses: {
      200: { description: 'The attempt is queued', content: { 'application/json': { schema: AnswerSchema } } },
      404: webhookNotFound,
      ...webhookErrorResponses,
    },
  });
  app.openapi(route, async (c) => {
    const merchantId = c.get('merchant').id;
    const eventId = eventRowId(c.req.valid('json').eventId);
    await requireEnabledEndpoint(c, merchantId);
    await chargeManualSend(c, merchantId);
    const delivery = await reopenDelivery(c.get('deps').db, merchantId, eventId, retentionStart(c));
    // Another merchant's event is as unknown as one that never was.
    if (!delivery) throw new AppError('NOT_FOUND', 'Event not found');
    await resendWebhookEvent(queueingDeps(c), merchantId, delivery, { attempts: 1 });
    c.get('logger').info({ merchantId, eventId }, 'webhook event sent again on request');
    return c.json({ eventId: webhookMessageId(eventId) }, 200);
  });
}
