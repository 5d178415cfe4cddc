import { createRoute, z } from '@hono/zod-openapi';
import { singleCancelDeduplicationKey } from '../../shared/cancellations/member-ids.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App } from '../context.js';
import {
  identifier,
  jsonBody,
  merchantErrorResponses,
  SIGNING_EXAMPLE_PLACEHOLDERS,
  signedFields,
} from '../http/schemas.js';
import { acceptedResponse, CancelHeadersSchema } from './cancel-answer.js';
import { enqueueAndAnswer, idempotencyErrorResponses } from './enqueue-cancellation.js';

const CancelRequestSchema = z
  .object({
    ...signedFields,
    id: uuidSchema().nullish().openapi({ description: 'Reward id (exactly one of id or externalId)' }),
    externalId: identifier
      .nullish()
      .openapi({ description: 'Merchant-defined reward id (exactly one of id or externalId)' }),
  })
  .refine((body) => (body.id == null) !== (body.externalId == null), {
    message: 'exactly one of id or externalId is required',
    path: ['id'],
  })
  .openapi('CancelRequest', {
    // The refinement above, as the document states it: exactly one of the two is a string (null is absent).
    oneOf: [
      { required: ['id'], properties: { id: { type: 'string' } } },
      { required: ['externalId'], properties: { externalId: { type: 'string' } } },
    ],
    // Placeholders where the signature goes (schemas.ts): with the vector's values in their place, the
    // v2 vector "POST rewards/cancel" of docs/signing-test-vectors.json (a test checks).
    example: {
      merchantId: SIGNING_EXAMPLE_PLACEHOLDERS.merchantId,
      timestamp: 1763679600000,
      hash: SIGNING_EXAMPLE_PLACEHOLDERS.hash,
      externalId: 'demo-reward-1',
    },
  });

export function registerCancel(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: '/api/v1/integration/rewards/cancel',
    operationId: 'cancelReward',
    tags: ['Cancellation'],
    summary: 'Cancel one reward by id or externalId',
    description:
      'Queues the cancellation and answers once the job is stored. Only ACTIVE rewards change ' +
      '(to CANCELLED); the outcome is in the job status.',
    middleware: auth,
    request: { body: jsonBody(CancelRequestSchema), headers: CancelHeadersSchema },
    responses: {
      200: acceptedResponse(app),
      ...idempotencyErrorResponses,
      ...merchantErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    const { id, externalId } = body;
    const merchantId = c.get('merchant').id;
    const target = id != null ? { id } : { externalId: externalId as string };
    const payload = { merchantId, requestId: c.get('requestId'), acceptedAt: Date.now(), ...target };
    const request = { fields: body, idempotencyKey: c.req.valid('header')['idempotency-key'] };
    return enqueueAndAnswer(c, 'cancel', payload, singleCancelDeduplicationKey(merchantId, target), request);
  });
}
