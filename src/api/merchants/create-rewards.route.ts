import { createRoute, z } from '@hono/zod-openapi';
import { isUniqueViolation } from '../../shared/db/database-errors.js';
import { rewardStatuses } from '../../shared/db/schema.js';
import { AppError } from '../../shared/errors/errors.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { adminErrorResponses, identifier, jsonBody } from '../http/schemas.js';
import { findMerchantConfigurationIds } from '../reward-configurations/reward-configurations.repository.js';
import { auditAdminWrite } from './admin-audit.js';
import { adminRouteMeta, MerchantIdParamsSchema, requireMerchant } from './admin-schemas.js';
import { findTakenRewardExternalIds, insertRewards, REWARD_EXTERNAL_ID_KEY } from './rewards.repository.js';

const MAX_REWARDS_PER_REQUEST = 10_000;

const NewRewardSchema = z.strictObject({
  playerId: identifier,
  rewardConfigurationId: uuidSchema().openapi({ description: "One of this merchant's configurations" }),
  externalId: identifier.nullish().openapi({ description: 'Merchant-defined id, unique per merchant' }),
  status: z.enum(rewardStatuses).default('ACTIVE'),
});

const CreateRewardsRequestSchema = z
  .strictObject({
    rewards: z.array(NewRewardSchema).min(1).max(MAX_REWARDS_PER_REQUEST),
  })
  .superRefine((body, ctx) => {
    const seen = new Set<string>();
    body.rewards.forEach((reward, index) => {
      if (reward.externalId == null) return;
      if (seen.has(reward.externalId)) {
        ctx.addIssue({ code: 'custom', path: ['rewards', index, 'externalId'], message: 'duplicate in this request' });
      }
      seen.add(reward.externalId);
    });
  })
  .openapi('AdminCreateRewardsRequest');

const CreatedRewardSchema = z.object({
  id: uuidSchema(),
  externalId: z.string().nullable(),
  playerId: z.string(),
  rewardConfigurationId: uuidSchema(),
  status: z.enum(rewardStatuses),
});

const CreatedRewardsSchema = z
  .object({ rewards: z.array(CreatedRewardSchema).openapi({ description: 'In request order' }) })
  .openapi('AdminCreatedRewards');

export function registerCreateRewards(app: App): void {
  const route = createRoute({
    method: 'post',
    path: '/admin/v1/merchants/{merchantId}/rewards',
    operationId: 'adminCreateRewards',
    ...adminRouteMeta,
    summary: 'Assign 1 to 10,000 rewards to players',
    description: 'All or nothing: one bad entry rejects the request, naming its index.',
    request: { params: MerchantIdParamsSchema, body: jsonBody(CreateRewardsRequestSchema) },
    responses: {
      201: {
        description: 'The rewards, in request order',
        content: { 'application/json': { schema: CreatedRewardsSchema } },
      },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const merchantId = c.req.valid('param').merchantId.toLowerCase();
    const rewards = c.req.valid('json').rewards.map((reward) => ({
      playerId: reward.playerId,
      rewardConfigurationId: reward.rewardConfigurationId.toLowerCase(),
      externalId: reward.externalId ?? null,
      status: reward.status,
    }));
    const { db } = c.get('deps');
    await requireMerchant(db, merchantId);

    const configurationIds = [...new Set(rewards.map((reward) => reward.rewardConfigurationId))];
    const owned = await findMerchantConfigurationIds(db, merchantId, configurationIds);
    const unknownAt = rewards.findIndex((reward) => !owned.has(reward.rewardConfigurationId));
    if (unknownAt >= 0) {
      throw new AppError('INVALID_REQUEST', `rewards[${unknownAt}].rewardConfigurationId: unknown configuration`);
    }

    const externalIds = rewards.flatMap((reward) => (reward.externalId === null ? [] : [reward.externalId]));
    const taken = await findTakenRewardExternalIds(db, merchantId, externalIds);
    const takenAt = rewards.findIndex((reward) => reward.externalId !== null && taken.has(reward.externalId));
    if (takenAt >= 0) throw duplicateExternalId(`rewards[${takenAt}].externalId`);

    try {
      const inserted = await db.transaction().execute(async (trx) => {
        const created = await insertRewards(trx, merchantId, rewards);
        await auditAdminWrite(c, trx, {
          action: 'rewards.create',
          target: merchantId,
          after: { count: created.length, rewardConfigurationIds: configurationIds },
        });
        return created;
      });
      c.get('logger').info({ merchantId, rewards: inserted.length }, 'rewards created');
      return c.json(
        {
          rewards: inserted.map(({ id, externalId, playerId, rewardConfigurationId, status }) => ({
            id,
            externalId,
            playerId,
            rewardConfigurationId,
            status,
          })),
        },
        201,
      );
    } catch (error) {
      // Another request took one of the externalIds between the check above and the insert.
      if (isUniqueViolation(error, REWARD_EXTERNAL_ID_KEY)) throw duplicateExternalId('rewards[].externalId');
      throw error;
    }
  });
}

function duplicateExternalId(field: string): AppError {
  return new AppError('INVALID_REQUEST', `${field}: the merchant already has a reward with this externalId`);
}
