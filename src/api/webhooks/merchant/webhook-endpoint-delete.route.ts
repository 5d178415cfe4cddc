import { createRoute, z } from '@hono/zod-openapi';
import { auditMerchantWrite } from '../../admin/admin-audit.js';
import type { App } from '../../context.js';
import type { MerchantRouteMiddleware } from '../../middleware/merchant-auth.middleware.js';
import { jsonBody } from '../../schemas.js';
import { removeWebhookSettings } from '../webhook-settings.js';
import { signedFields, webhookErrorResponses, webhooksPath, webhooksTag } from './merchant-webhook-context.js';

const RequestSchema = z.strictObject({ ...signedFields }).openapi('WebhookDeleteRequest');
const AnswerSchema = z
  .object({ removed: z.boolean().openapi({ description: 'false: you had no endpoint' }) })
  .openapi('WebhookDeleted');

export function registerWebhookEndpointDelete(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: webhooksPath('delete'),
    operationId: 'deleteWebhook',
    tags: [webhooksTag],
    summary: 'Remove your webhook endpoint',
    description:
      'No more events are sent; deliveries waiting for a retry are given up at their next attempt. Idempotent. ' +
      'The delivery log stays.',
    middleware: auth,
    request: { body: jsonBody(RequestSchema) },
    responses: {
      200: { description: 'No endpoint now', content: { 'application/json': { schema: AnswerSchema } } },
      ...webhookErrorResponses,
    },
  });
  app.openapi(route, async (c) => {
    const removed = await removeWebhookSettings(c, c.get('merchant').id, auditMerchantWrite);
    return c.json({ removed }, 200);
  });
}
