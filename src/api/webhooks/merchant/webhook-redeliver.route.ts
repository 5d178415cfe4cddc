import { createRoute, z } from '@hono/zod-openapi';
import type { MerchantRouteMiddleware } from '../../auth/merchant-auth.middleware.js';
import type { App } from '../../context.js';
import { jsonBody } from '../../http/schemas.js';
import {
  eventIdSchema,
  signedFields,
  webhookErrorResponses,
  webhookNotFound,
  webhooksPath,
  webhooksTag,
} from './merchant-webhook-context.js';
import { redeliverWebhookEvent } from './webhook-sends.js';

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
    const { eventId } = c.req.valid('json');
    return c.json(await redeliverWebhookEvent(c.get('deps'), c.get('merchant').id, eventId, c.get('logger')), 200);
  });
}
