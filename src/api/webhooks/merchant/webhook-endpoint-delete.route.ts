import { createRoute, z } from '@hono/zod-openapi';
import type { MerchantRouteMiddleware } from '../../auth/merchant-auth.middleware.js';
import type { App } from '../../context.js';
import { jsonBody } from '../../http/schemas.js';
import { auditMerchantWrite } from '../../merchants/admin-audit.js';
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
