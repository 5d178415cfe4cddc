import { createRoute, z } from '@hono/zod-openapi';
import { deduplicationKey } from '../../shared/queue/job-catalogue.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import type { MerchantRouteMiddleware } from '../middleware/merchant-auth.middleware.js';
import { identifier, jsonBody, merchantErrorResponses, signedFields } from '../schemas.js';
import { acceptedResponse, enqueueAndAnswer } from './enqueue-cancellation.js';

const CancelRequestSchema = z
  .object({
    ...signedFields,
    id: uuidSchema().nullish().openapi({ description: 'Reward id (exactly one of id or externalId)' }),
    externalId: identifier.nullish().openapi({ description: 'Merchant-defined reward id' }),
  })
  .refine((body) => (body.id == null) !== (body.externalId == null), {
    message: 'exactly one of id or externalId is required',
    path: ['id'],
  })
  .openapi('CancelRequest');

export function registerCancel(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: '/api/v1/integration/rewards/cancel',
    tags: ['Cancellation'],
    summary: 'Cancel one reward by id or externalId',
    description:
      'Queues the cancellation and answers once the job is stored. Only ACTIVE rewards change ' +
      '(to CANCELLED); the outcome is in the job status.',
    middleware: auth,
    request: { body: jsonBody(CancelRequestSchema) },
    responses: { 200: acceptedResponse, ...merchantErrorResponses },
  });

  app.openapi(route, async (c) => {
    const { id, externalId } = c.req.valid('json');
    const merchantId = c.var.merchant.id;
    const target = id != null ? { id } : { externalId: externalId as string };
    const payload = { merchantId, requestId: c.var.requestId, acceptedAt: Date.now(), ...target };
    return enqueueAndAnswer(c, 'cancel', payload, deduplicationKey(merchantId, 'cancel', target)) as never;
  });
}
