import { createRoute, z } from '@hono/zod-openapi';
import { rewardStatuses } from '../../shared/db/schema.js';
import { AppError } from '../../shared/errors/errors.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { adminErrorResponses } from '../http/schemas.js';
import { adminRouteMeta, MerchantIdParamsSchema } from './admin-schemas.js';
import { findRewardForMerchant } from './rewards.repository.js';

const RewardParamsSchema = MerchantIdParamsSchema.extend({
  rewardId: uuidSchema().openapi({ param: { name: 'rewardId', in: 'path' } }),
});

const RewardSchema = z
  .object({
    id: uuidSchema(),
    externalId: z.string().nullable(),
    playerId: z.string(),
    rewardConfigurationId: uuidSchema(),
    status: z.enum(rewardStatuses),
    cancelledAt: z.number().int().nullable().openapi({ description: 'Epoch milliseconds' }),
    cancellationJobId: z.string().nullable().openapi({ description: 'The X-Job-Id of the cancel that did it' }),
  })
  .openapi('AdminReward');

export function registerGetReward(app: App): void {
  const route = createRoute({
    method: 'get',
    path: '/admin/v1/merchants/{merchantId}/rewards/{rewardId}',
    operationId: 'adminGetReward',
    ...adminRouteMeta,
    summary: 'One reward, with its cancellation if any',
    request: { params: RewardParamsSchema },
    responses: {
      200: { description: 'The reward', content: { 'application/json': { schema: RewardSchema } } },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const { merchantId, rewardId } = c.req.valid('param');
    const reward = await findRewardForMerchant(c.get('deps').db, merchantId.toLowerCase(), rewardId.toLowerCase());
    if (!reward) throw new AppError('NOT_FOUND', 'Reward not found');
    return c.json(
      {
        id: reward.id,
        externalId: reward.external_id,
        playerId: reward.player_id,
        rewardConfigurationId: reward.reward_configuration_id,
        status: reward.status,
        cancelledAt: reward.cancelled_at?.getTime() ?? null,
        cancellationJobId: reward.cancellation_job_id,
      },
      200,
    );
  });
}
