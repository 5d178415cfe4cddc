import { z } from '@hono/zod-openapi';
import { webhookDeliveryStates } from '../../shared/db/schema.js';
import { AppError } from '../../shared/errors/errors.js';
import { allWebhookEventTypes } from '../../shared/webhooks/webhook-catalogue.js';
import type { App } from '../context.js';
import { eventIdSchema } from '../webhooks/merchant/merchant-webhook-context.js';
import { readWebhookEndpoint, webhookDeliveriesPage } from '../webhooks/merchant/webhook-delivery-page.js';
import { redeliverWebhookEvent, sendWebhookTestEvent } from '../webhooks/merchant/webhook-sends.js';
import { auditPortalAction } from './portal-audit.js';
import { pageLimit, portalQuery } from './portal-query.js';
import { portalSession } from './portal-session.middleware.js';

const DeliveriesQuery = z.object({
  after: eventIdSchema.optional(),
  limit: pageLimit(100).default(20),
  status: z.enum(webhookDeliveryStates).optional(),
  type: z.enum(allWebhookEventTypes).optional(),
  jobId: z.uuid().optional(),
});

/**
 * The portal's webhook views and sends, each through the code the signed API runs (webhooks/get,
 * webhooks/deliveries, webhooks/redeliver, webhooks/test), for the session's merchant only. The endpoint
 * is shown as the signed API shows it: never its secret.
 */
export function registerPortalWebhookRoutes(app: App): void {
  app.get('/portal/api/webhook', async (c) => {
    try {
      return c.json({ endpoint: await readWebhookEndpoint(c.get('deps'), portalSession(c).merchantId) }, 200);
    } catch (error) {
      // No endpoint is an answer of its own for the page ("none set"), not a failure.
      if (error instanceof AppError && error.status === 404) return c.json({ endpoint: null }, 200);
      throw error;
    }
  });

  app.get('/portal/api/webhook/deliveries', async (c) => {
    const query = portalQuery(c, DeliveriesQuery);
    return c.json(await webhookDeliveriesPage(c.get('deps'), portalSession(c).merchantId, query), 200);
  });

  app.post('/portal/api/webhook/deliveries/:eventId/redeliver', async (c) => {
    const parsed = eventIdSchema.safeParse(c.req.param('eventId'));
    if (!parsed.success) throw new AppError('NOT_FOUND', 'Event not found');
    const sent = await redeliverWebhookEvent(c.get('deps'), portalSession(c).merchantId, parsed.data, c.get('logger'));
    // Recorded once queued: a refused send (another merchant's event, no endpoint) sent nothing.
    await auditPortalAction(c, c.get('deps').db, { action: 'webhook.redeliver', target: sent.eventId });
    return c.json(sent, 200);
  });

  app.post('/portal/api/webhook/test', async (c) => {
    const sent = await sendWebhookTestEvent(c.get('deps'), portalSession(c).merchantId);
    await auditPortalAction(c, c.get('deps').db, { action: 'webhook.test', target: sent.eventId });
    return c.json(sent, 200);
  });
}
