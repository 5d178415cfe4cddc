import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../shared/errors.js';
import { checkWebhookUrl, displayableWebhookUrl } from '../../shared/webhooks/webhook-address-guard.js';
import { webhookEventTypes } from '../../shared/webhooks/webhook-catalogue.js';
import { generateWebhookSecret } from '../../shared/webhooks/webhook-signature.js';
import { findWebhookStatus, upsertWebhook } from '../../shared/webhooks/webhooks.repository.js';
import { auditAdminWrite } from '../admin/admin-audit.js';
import { adminRouteMeta, MerchantIdParamsSchema, requireMerchant } from '../admin/admin-schemas.js';
import type { App } from '../context.js';
import { adminErrorResponses, jsonBody } from '../schemas.js';

const eventsSchema = z
  .array(z.enum(webhookEventTypes))
  .min(1, 'give at least one event type, or leave events out for all of them')
  .max(webhookEventTypes.length)
  .refine((events) => new Set(events).size === events.length, 'each event type at most once');

const PutWebhookRequestSchema = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .max(2_048)
      .openapi({
        description:
          'http or https, without user information (`user:password@` is refused). Loopback, private, link-local and ' +
          'every other special-purpose address (the IANA registries) are refused, when the URL is set and again, after ' +
          'resolving the host name, at every delivery (unless WEBHOOK_ALLOW_PRIVATE)',
        example: 'https://merchant.example/webhooks/rewards',
      }),
    events: eventsSchema.optional().openapi({
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
    const checked = checkWebhookUrl(body.url, c.get('deps').config.WEBHOOK_ALLOW_PRIVATE);
    if (!checked.ok) throw new AppError('INVALID_REQUEST', `url: ${checked.reason}`);
    await requireMerchant(c.get('deps').db, merchantId);
    const webhook = {
      url: checked.url,
      events: body.events ?? [...webhookEventTypes],
      secret: generateWebhookSecret(),
    };
    await c
      .get('deps')
      .db.transaction()
      .execute(async (trx) => {
        const before = await findWebhookStatus(trx, merchantId);
        await upsertWebhook(trx, c.get('deps').secrets, merchantId, webhook);
        await auditAdminWrite(c, trx, {
          action: 'webhook.put',
          target: merchantId,
          // Nothing secret in the log: no signing secret, and no user information a URL stored before it
          // was refused may still carry.
          before: before ? { url: displayableWebhookUrl(before.url), events: before.events } : null,
          after: { url: webhook.url, events: webhook.events },
        });
      });
    c.get('logger').info({ merchantId, host: new URL(webhook.url).host, events: webhook.events }, 'webhook set');
    return c.json(webhook, 200);
  });
}
