import { createRoute, z } from '@hono/zod-openapi';
import { webhookEventTypes } from '../../shared/webhooks/webhook-catalogue.js';
import type { App } from '../context.js';
import { adminErrorResponses, jsonBody } from '../http/schemas.js';
import { auditAdminWrite } from '../merchants/admin-audit.js';
import { adminRouteMeta, MerchantIdParamsSchema, requireMerchant } from '../merchants/admin-schemas.js';
import { applyWebhookSettings, webhookEventsSchema, webhookUrlSchema } from './webhook-settings.js';

const PutWebhookRequestSchema = z
  .strictObject({
    url: webhookUrlSchema,
    events: webhookEventsSchema.optional().openapi({
      description: 'Event types sent; default: all of them',
      example: ['job.completed', 'job.failed', 'job.cancelled'],
    }),
  })
  .openapi('AdminPutWebhookRequest');

const WebhookSchema = z
  .object({
    url: z.string().openapi({ description: 'The URL in normal form' }),
    events: z.array(z.enum(webhookEventTypes)),
    secret: z.string().openapi({
      description:
        'The signing secret: `whsec_` + base64 of 32 random bytes. Shown only in this answer (stored sealed); every PUT ' +
        'makes a new one',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/xSAaMzSA1c=',
    }),
  })
  .openapi('AdminWebhook');

export function registerPutWebhook(app: App): void {
  const route = createRoute({
    method: 'put',
    path: '/admin/v1/merchants/{merchantId}/webhook',
    operationId: 'adminPutWebhook',
    ...adminRouteMeta,
    summary: "Set a merchant's completion webhook (Standard Webhooks), with a new signing secret",
    description:
      'Replaces the webhook the merchant had, if any: URL, events and secret. The old secret stops signing at ' +
      'once, deliveries still being retried included; give the new one to the merchant. An endpoint disabled for ' +
      'failing is enabled again (events dropped while it was disabled are not sent again).',
    request: { params: MerchantIdParamsSchema, body: jsonBody(PutWebhookRequestSchema) },
    responses: {
      200: {
        description: 'The webhook and its new secret',
        content: { 'application/json': { schema: WebhookSchema } },
      },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const merchantId = c.req.valid('param').merchantId.toLowerCase();
    const body = c.req.valid('json');
    const webhook = await applyWebhookSettings(c, merchantId, body, auditAdminWrite, () =>
      requireMerchant(c.get('deps').db, merchantId),
    );
    return c.json(webhook, 200);
  });
}
