import { createRoute, z } from '@hono/zod-openapi';
import type { MerchantRouteMiddleware } from '../../auth/merchant-auth.middleware.js';
import type { App } from '../../context.js';
import { jsonBody } from '../../http/schemas.js';
import { webhookStatusFields } from '../webhook-settings.js';
import {
  signedFields,
  webhookErrorResponses,
  webhookNotFound,
  webhooksPath,
  webhooksTag,
} from './merchant-webhook-context.js';
import { readWebhookEndpoint } from './webhook-delivery-page.js';

const RequestSchema = z.strictObject({ ...signedFields }).openapi('WebhookGetRequest');
const AnswerSchema = z.object(webhookStatusFields).openapi('Webhook');

export function registerWebhookEndpointGet(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: webhooksPath('get'),
    operationId: 'getWebhook',
    tags: [webhooksTag],
    summary: 'Your webhook endpoint and whether it is enabled (never its secret)',
    middleware: auth,
    request: { body: jsonBody(RequestSchema) },
    responses: {
      200: { description: 'The endpoint', content: { 'application/json': { schema: AnswerSchema } } },
      404: webhookNotFound,
      ...webhookErrorResponses,
    },
  });
  app.openapi(route, async (c) => c.json(await readWebhookEndpoint(c.get('deps'), c.get('merchant').id), 200));
}
