import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../shared/errors.js';
import { displayableWebhookUrl } from '../../shared/webhooks/webhook-address-guard.js';
import { webhookEventTypes } from '../../shared/webhooks/webhook-catalogue.js';
import { findWebhookStatus } from '../../shared/webhooks/webhooks.repository.js';
import { adminRouteMeta, MerchantIdParamsSchema, requireMerchant } from '../admin/admin-schemas.js';
import type { App } from '../context.js';
import { adminErrorResponses } from '../schemas.js';

const epochMs = (description: string) => z.number().int().nullable().openapi({ description });

const WebhookStatusSchema = z
  .object({
    url: z.string().openapi({ description: 'The URL, never with user information' }),
    events: z.array(z.enum(webhookEventTypes)),
    enabled: z.boolean().openapi({ description: 'false once disabled for failing; a PUT enables it again' }),
    failingSince: epochMs(
      'Epoch milliseconds of the first failed attempt since the last delivery; null while the endpoint delivers',
    ),
    disabledAt: epochMs(
      'Epoch milliseconds: when the endpoint was disabled for failing every attempt for WEBHOOK_DISABLE_AFTER_MS; ' +
        'null while enabled. While disabled, events are recorded as dropped and not sent',
    ),
    disabledReason: z.string().nullable().openapi({
      description: 'Why it was disabled',
      example: 'every delivery failed since 2026-11-24T03:00:00Z (last: HTTP 500)',
    }),
  })
  .openapi('AdminWebhookStatus');

export function registerGetWebhook(app: App): void {
  const route = createRoute({
    method: 'get',
    path: '/admin/v1/merchants/{merchantId}/webhook',
    operationId: 'adminGetWebhook',
    ...adminRouteMeta,
    summary: "A merchant's webhook and whether it is enabled (the secret is never shown again)",
    request: { params: MerchantIdParamsSchema },
    responses: {
      200: { description: 'The webhook', content: { 'application/json': { schema: WebhookStatusSchema } } },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const merchantId = c.req.valid('param').merchantId.toLowerCase();
    await requireMerchant(c.get('deps').db, merchantId);
    const webhook = await findWebhookStatus(c.get('deps').db, merchantId);
    if (!webhook) throw new AppError('NOT_FOUND', 'The merchant has no webhook');
    return c.json(
      {
        url: displayableWebhookUrl(webhook.url),
        events: webhook.events,
        enabled: webhook.disabledAt === null,
        failingSince: webhook.failingSince?.getTime() ?? null,
        disabledAt: webhook.disabledAt?.getTime() ?? null,
        disabledReason: webhook.disabledReason,
      },
      200,
    );
  });
}
