import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../shared/errors/errors.js';
import { findWebhookStatus } from '../../shared/webhooks/webhooks.repository.js';
import type { App } from '../context.js';
import { adminErrorResponses } from '../http/schemas.js';
import { adminRouteMeta, MerchantIdParamsSchema, requireMerchant } from '../merchants/admin-schemas.js';
import { webhookStatusAnswer, webhookStatusFields } from './webhook-settings.js';

const WebhookStatusSchema = z.object(webhookStatusFields).openapi('AdminWebhookStatus');

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
    return c.json(webhookStatusAnswer(webhook), 200);
  });
}
