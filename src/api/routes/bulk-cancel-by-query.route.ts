import { createRoute, z } from '@hono/zod-openapi';
import { deduplicationKey } from '../../shared/queue/job-catalogue.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import type { MerchantRouteMiddleware } from '../middleware/merchant-auth.middleware.js';
import { assertListSize, identifier, jsonBody, merchantErrorResponses, signedFields } from '../schemas.js';
import { acceptedResponse, enqueueAndAnswer } from './enqueue-cancellation.js';

const BulkCancelByQueryRequestSchema = z
  .object({
    ...signedFields,
    playerIds: z.array(identifier).openapi({ description: 'Players whose ACTIVE rewards are cancelled' }),
    rewardConfigurationId: uuidSchema().nullish().openapi({ description: 'Only rewards of this configuration' }),
    externalRewardConfigurationId: identifier
      .nullish()
      .openapi({ description: 'Only rewards of the configuration with this merchant-defined id' }),
  })
  .openapi('BulkCancelByQueryRequest');

export function registerBulkCancelByQuery(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: '/api/v1/integration/rewards/bulkCancelByQuery',
    tags: ['Cancellation'],
    summary: 'Cancel the ACTIVE rewards of the given players',
    description:
      '1 to 10,000 playerIds (BULK_MAX_ITEMS). With both configuration ids, a reward must match both; ' +
      'with neither, every ACTIVE reward of those players is cancelled. An unknown configuration ' +
      'gives a job that cancels nothing.',
    middleware: auth,
    request: { body: jsonBody(BulkCancelByQueryRequestSchema) },
    responses: { 200: acceptedResponse, ...merchantErrorResponses },
  });

  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    assertListSize(body.playerIds.length, c.var.deps.config.BULK_MAX_ITEMS, 'playerIds');
    const merchantId = c.var.merchant.id;
    const playerIds = [...new Set(body.playerIds)].sort();
    const filter = {
      rewardConfigurationId: body.rewardConfigurationId?.toLowerCase() ?? undefined,
      externalRewardConfigurationId: body.externalRewardConfigurationId ?? undefined,
    };
    const payload = { merchantId, requestId: c.var.requestId, acceptedAt: Date.now(), playerIds, ...filter };
    const key = deduplicationKey(merchantId, 'bulkCancelByQuery', { playerIds, ...filter });
    return enqueueAndAnswer(c, 'bulkCancelByQuery', payload, key) as never;
  });
}
