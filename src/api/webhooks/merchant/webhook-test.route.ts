import { randomUUID } from 'node:crypto';
import { createRoute, z } from '@hono/zod-openapi';
import { webhookMessageId, webhookTestEventType } from '../../../shared/webhooks/webhook-catalogue.js';
import { webhookTestBody } from '../../../shared/webhooks/webhook-events.js';
import { queueWebhookEvent } from '../../../shared/webhooks/webhook-queueing.js';
import { recordWebhookEvent } from '../../../shared/webhooks/webhooks.repository.js';
import type { App } from '../../context.js';
import type { MerchantRouteMiddleware } from '../../middleware/merchant-auth.middleware.js';
import { jsonBody } from '../../schemas.js';
import { chargeManualSend } from './merchant-webhook-bounds.js';
import {
  queueingDeps,
  requireEnabledEndpoint,
  signedFields,
  webhookErrorResponses,
  webhooksPath,
  webhooksTag,
} from './merchant-webhook-context.js';

const RequestSchema = z.strictObject({ ...signedFields }).openapi('WebhookTestRequest');
const AnswerSchema = z
  .object({ eventId: z.string().openapi({ description: 'The `webhook-id` of the test event' }) })
  .openapi('WebhookTestSent');

export function registerWebhookTest(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: webhooksPath('test'),
    operationId: 'sendWebhookTestEvent',
    tags: [webhooksTag],
    summary: 'Send a webhook.test event to your endpoint',
    description:
      'Signed and retried like every event, and listed in the delivery log. Bounded per minute with ' +
      'webhooks/redeliver: 429 past it.',
    middleware: auth,
    request: { body: jsonBody(RequestSchema) },
    responses: {
      200: { description: 'The event is queued', content: { 'application/json': { schema: AnswerSchema } } },
      ...webhookErrorResponses,
    },
  });
  app.openapi(route, async (c) => {
    const merchantId = c.get('merchant').id;
    await requireEnabledEndpoint(c, merchantId);
    await chargeManualSend(c, merchantId);
    const eventId = randomUUID();
    const event = { eventId, merchantId, type: webhookTestEventType, jobId: '', body: webhookTestBody(merchantId) };
    // Recorded before it is queued: the log lists it from this answer on.
    await recordWebhookEvent(c.get('deps').db, { ...event, id: eventId });
    await queueWebhookEvent(queueingDeps(c), event);
    return c.json({ eventId: webhookMessageId(eventId) }, 200);
  });
}
