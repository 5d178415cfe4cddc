import { createRoute, z } from '@hono/zod-openapi';
import type { MerchantRouteMiddleware } from '../../auth/merchant-auth.middleware.js';
import type { App } from '../../context.js';
import { jsonBody } from '../../http/schemas.js';
import { signedFields, webhookErrorResponses, webhooksPath, webhooksTag } from './merchant-webhook-context.js';
import { sendWebhookTestEvent } from './webhook-sends.js';

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
  app.openapi(route, async (c) => c.json(await sendWebhookTestEvent(c.get('deps'), c.get('merchant').id), 200));
}
