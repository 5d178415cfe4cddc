import { createRoute } from '@hono/zod-openapi';
import type { App } from '../context.js';
import { adminErrorResponses } from '../http/schemas.js';
import { auditAdminWrite } from '../merchants/admin-audit.js';
import { adminRouteMeta, MerchantIdParamsSchema, requireMerchant } from '../merchants/admin-schemas.js';
import { removeWebhookSettings } from './webhook-settings.js';

export function registerDeleteWebhook(app: App): void {
  const route = createRoute({
    method: 'delete',
    path: '/admin/v1/merchants/{merchantId}/webhook',
    operationId: 'adminDeleteWebhook',
    ...adminRouteMeta,
    summary: "Remove a merchant's webhook",
    description:
      'No more events are sent; deliveries still waiting for a retry are given up at their next attempt. ' +
      'Idempotent: 204 also when the merchant had no webhook. The delivery history stays listed.',
    request: { params: MerchantIdParamsSchema },
    responses: {
      204: { description: 'The merchant has no webhook now' },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const merchantId = c.req.valid('param').merchantId.toLowerCase();
    await requireMerchant(c.get('deps').db, merchantId);
    await removeWebhookSettings(c, merchantId, auditAdminWrite);
    return c.body(null, 204);
  });
}
