import { createRoute, z } from '@hono/zod-openapi';
import { webhookEventTypes } from '../../../shared/webhooks/webhook-catalogue.js';
import type { MerchantRouteMiddleware } from '../../auth/merchant-auth.middleware.js';
import type { App } from '../../context.js';
import { jsonBody } from '../../http/schemas.js';
import { auditMerchantWrite } from '../../merchants/admin-audit.js';
import { applyWebhookSettings, webhookEventsSchema, webhookUrlSchema } from '../webhook-settings.js';
import { signedFields, webhookErrorResponses, webhooksPath, webhooksTag } from './merchant-webhook-context.js';

const RequestSchema = z
  .strictObject({
    ...signedFields,
    url: webhookUrlSchema,
    events: webhookEventsSchema.optional().openapi({
      description: 'Event types sent; default: all of them (webhook.test is sent whenever you ask for it)',
      example: [...webhookEventTypes],
    }),
  })
  .openapi('WebhookPutRequest');

const NewWebhookSchema = z
  .object({
    url: z.string().openapi({ description: 'The URL in normal form' }),
    events: z.array(z.enum(webhookEventTypes)),
    secret: z.string().openapi({
      description:
        'The signing secret (`whsec_` + base64 of 32 random bytes): shown only in this answer. Every put makes a new ' +
        'one, and the old one stops signing at once (webhooks/rotateSecret keeps it signing for 24 h)',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/xSAaMzSA1c=',
    }),
  })
  .openapi('NewWebhook');

export function registerWebhookEndpointPut(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: webhooksPath('put'),
    operationId: 'putWebhook',
    tags: [webhooksTag],
    summary: 'Set your webhook endpoint, with a new signing secret',
    description:
      'Replaces the endpoint you had, if any: URL, events and secret. An endpoint disabled for failing is enabled ' +
      'again; events not delivered meanwhile can then be sent with webhooks/recover. Recorded in the audit log as ' +
      'your own change.',
    middleware: auth,
    request: { body: jsonBody(RequestSchema) },
    responses: {
      200: {
        description: 'The endpoint and its new secret',
        content: { 'application/json': { schema: NewWebhookSchema } },
      },
      ...webhookErrorResponses,
    },
  });
  app.openapi(route, async (c) => {
    const { url, events } = c.req.valid('json');
    const webhook = await applyWebhookSettings(c, c.get('merchant').id, { url, events }, auditMerchantWrite);
    return c.json(webhook, 200);
  });
}
