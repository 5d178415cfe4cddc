import { createRoute, z } from '@hono/zod-openapi';
import { deduplicationKey } from '../../shared/queue/job-catalogue.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import type { MerchantRouteMiddleware } from '../middleware/merchant-auth.middleware.js';
import { assertListSize, identifier, jsonBody, merchantErrorResponses, signedFields } from '../schemas.js';
import { acceptedResponse, enqueueAndAnswer } from './enqueue-cancellation.js';

const BulkCancelRequestSchema = z
  .object({
    ...signedFields,
    ids: z.array(uuidSchema()).nullish().openapi({ description: 'Reward ids' }),
    externalIds: z.array(identifier).nullish().openapi({ description: 'Merchant-defined reward ids' }),
  })
  .openapi('BulkCancelRequest');

export function registerBulkCancel(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: '/api/v1/integration/rewards/bulkCancel',
    tags: ['Cancellation'],
    summary: 'Cancel many rewards by ids and/or externalIds',
    description:
      'Rewards matching either list are cancelled. Together the lists hold 1 to 10,000 entries ' +
      '(BULK_MAX_ITEMS); duplicates collapse. One malformed entry rejects the whole request.',
    middleware: auth,
    request: { body: jsonBody(BulkCancelRequestSchema) },
    responses: { 200: acceptedResponse, ...merchantErrorResponses },
  });

  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    const ids = body.ids ?? [];
    const externalIds = body.externalIds ?? [];
    assertListSize(ids.length + externalIds.length, c.var.deps.config.BULK_MAX_ITEMS, 'ids and externalIds');
    const merchantId = c.var.merchant.id;
    // Ids are compared lower-case in Postgres' uuid type; collapse spelling variants here too.
    const uniqueIds = [...new Set(ids.map((id) => id.toLowerCase()))];
    const uniqueExternalIds = [...new Set(externalIds)];
    const payload = {
      merchantId,
      requestId: c.var.requestId,
      acceptedAt: Date.now(),
      ids: uniqueIds,
      externalIds: uniqueExternalIds,
    };
    const key = deduplicationKey(merchantId, 'bulkCancel', { ids: uniqueIds, externalIds: uniqueExternalIds });
    return enqueueAndAnswer(c, 'bulkCancel', payload, key) as never;
  });
}
