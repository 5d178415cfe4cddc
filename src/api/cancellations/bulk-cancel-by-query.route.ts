import { z } from '@hono/zod-openapi';
import type { Db } from '../../shared/db/client.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App } from '../context.js';
import { assertListSize, bulkList, dryRunField, identifier, signedFields } from '../http/schemas.js';
import { bulkCancelRoute, dryRunOrEnqueue } from './bulk-cancel-route.js';
import { previewCancelOfPlayers } from './cancellation-preview.repository.js';

const BulkCancelByQueryRequestSchema = z
  .object({
    ...signedFields,
    playerIds: bulkList(identifier, 1).openapi({
      description: 'Players whose ACTIVE rewards are cancelled: 1 to 10,000 (BULK_MAX_ITEMS)',
    }),
    rewardConfigurationId: uuidSchema().nullish().openapi({ description: 'Only rewards of this configuration' }),
    externalRewardConfigurationId: identifier
      .nullish()
      .openapi({ description: 'Only rewards of the configuration with this merchant-defined id' }),
    dryRun: dryRunField,
  })
  .openapi('BulkCancelByQueryRequest');

const BulkCancelByQueryDryRunSchema = z
  .object({
    players: z.number().int().nonnegative().openapi({ description: 'Distinct player ids of the request' }),
    cancellable: z
      .number()
      .int()
      .nonnegative()
      .openapi({ description: 'ACTIVE rewards of those players (and configuration): what the job would cancel now' }),
  })
  .openapi('BulkCancelByQueryDryRun');

export function registerBulkCancelByQuery(app: App, auth: MerchantRouteMiddleware): void {
  const route = bulkCancelRoute(app, auth, {
    operationId: 'bulkCancelByQuery',
    summary: 'Cancel the ACTIVE rewards of the given players',
    description:
      '1 to 10,000 playerIds (BULK_MAX_ITEMS). With both configuration ids, a reward must match both; ' +
      'with neither, every ACTIVE reward of those players is cancelled. An unknown configuration ' +
      'gives a job that cancels nothing. With `dryRun: true`, nothing is queued and the answer counts ' +
      'what the request would cancel now.',
    body: BulkCancelByQueryRequestSchema,
    dryRunCounts: BulkCancelByQueryDryRunSchema,
  });

  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    assertListSize(body.playerIds.length, c.get('deps').config.BULK_MAX_ITEMS, 'playerIds');
    const playerIds = [...new Set(body.playerIds)].sort();
    const filter = {
      rewardConfigurationId: body.rewardConfigurationId?.toLowerCase() ?? undefined,
      externalRewardConfigurationId: body.externalRewardConfigurationId ?? undefined,
    };
    const counts = async (db: Db, merchantId: string) => ({
      players: playerIds.length,
      cancellable: await previewCancelOfPlayers(db, { merchantId, playerIds, filter }),
    });
    const job = { name: 'bulkCancelByQuery' as const, identifiers: { playerIds, ...filter } };
    const request = { fields: body, idempotencyKey: c.req.valid('header')['idempotency-key'] };
    return dryRunOrEnqueue(c, request, job, body.dryRun ? counts : undefined);
  });
}
