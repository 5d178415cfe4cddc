import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../../shared/errors/errors.js';
import { webhookRecoverJobId } from '../../../shared/webhooks/webhook-catalogue.js';
import { countUndelivered } from '../../../shared/webhooks/webhook-delivery-log.repository.js';
import type { MerchantRouteMiddleware } from '../../auth/merchant-auth.middleware.js';
import type { App } from '../../context.js';
import { jsonBody } from '../../http/schemas.js';
import {
  requireEnabledEndpoint,
  retentionStart,
  signedFields,
  webhookErrorResponses,
  webhooksPath,
  webhooksTag,
} from './merchant-webhook-context.js';

const RequestSchema = z
  .strictObject({
    ...signedFields,
    since: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).openapi({
      description:
        'Epoch milliseconds: events from then on (at most the retention back; earlier means that; a time to come recovers nothing)',
      example: 1763593200000,
    }),
  })
  .openapi('WebhookRecoverRequest');

const AnswerSchema = z
  .object({
    since: z.number().int().openapi({ description: 'Epoch milliseconds: where the recovery starts (after clamping)' }),
    until: z.number().int().openapi({ description: 'Epoch milliseconds: this request; later events are sent anyway' }),
    events: z.number().int().openapi({ description: 'Events to be sent again' }),
  })
  .openapi('WebhookRecovery');

export function registerWebhookRecover(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: webhooksPath('recover'),
    operationId: 'recoverWebhookEvents',
    tags: [webhooksTag],
    summary: 'Send again every event since a time that was not delivered, those dropped while disabled included',
    description:
      'For the event types the endpoint takes now. The events are queued gradually (a batch at a time while ' +
      'your pending events leave room) and sent with the usual retries, each with its own webhook-id. One ' +
      'recovery at a time: 429 while one runs.',
    middleware: auth,
    request: { body: jsonBody(RequestSchema) },
    responses: {
      200: { description: 'The recovery is under way', content: { 'application/json': { schema: AnswerSchema } } },
      ...webhookErrorResponses,
    },
  });
  app.openapi(route, async (c) => {
    const merchantId = c.get('merchant').id;
    const now = Date.now();
    const requested = c.req.valid('json').since;
    // A time to come is not an error: nothing was undelivered after it (the document states only a range).
    const since = Math.min(Math.max(requested, retentionStart(c.get('deps')).getTime()), now);
    const webhook = await requireEnabledEndpoint(c.get('deps'), merchantId);
    const queue = c.get('deps').producer.queues.webhooks;
    const jobId = webhookRecoverJobId(merchantId);
    const running = await queue.getJob(jobId);
    if (running) {
      const state = await running.getState();
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') {
        throw new AppError('RATE_LIMITED', 'A recovery of your events is under way; one at a time', {
          retryAfterSeconds: 60,
        });
      }
      await running.remove().catch(() => {});
    }
    const events = await countUndelivered(c.get('deps').db, merchantId, {
      since: new Date(since),
      until: new Date(now),
      types: webhook.events,
    });
    if (events > 0) await queue.add('webhookRecover', { merchantId, since, until: now, queued: 0 }, { jobId });
    c.get('logger').info({ merchantId, since, events }, 'webhook recovery asked');
    return c.json({ since, until: now, events }, 200);
  });
}
