import { createRoute, z } from '@hono/zod-openapi';
import { isUniqueViolation } from '../../shared/db/database-errors.js';
import { configurationStatuses, rewardTypes } from '../../shared/db/schema.js';
import { AppError } from '../../shared/errors/errors.js';
import type { App } from '../context.js';
import { adminErrorResponses, identifier, jsonBody, RewardConfigurationSchema } from '../http/schemas.js';
import { rawJson } from '../http/typed-responses.js';
import {
  CONFIGURATION_EXTERNAL_ID_KEY,
  insertRewardConfiguration,
  selectConfigurationJson,
} from '../reward-configurations/reward-configurations.repository.js';
import { auditAdminWrite } from './admin-audit.js';
import {
  adminRouteMeta,
  currencyCodeSchema,
  decimalSchema,
  instantSchema,
  MerchantIdParamsSchema,
  requireMerchant,
} from './admin-schemas.js';

const INT32_MAX = 2_147_483_647;

const BetConstraintInputSchema = z.strictObject({
  betAmount: decimalSchema('positive'),
  maxWinPerBet: decimalSchema('positive'),
});

const GameInputSchema = z.strictObject({
  gameId: z.number().int().min(1).max(INT32_MAX),
  betConstraints: z
    .record(currencyCodeSchema, BetConstraintInputSchema, {
      error: (issue) => (issue.code === 'invalid_key' ? 'currency code must be three capital letters' : undefined),
    })
    .refine((constraints) => Object.keys(constraints).length > 0, 'at least one currency is required')
    .openapi({ example: { EUR: { betAmount: 0.5, maxWinPerBet: 100 } } }),
});

const CreateRewardConfigurationRequestSchema = z
  .strictObject({
    externalId: identifier.nullish().openapi({ description: 'Merchant-defined id, unique per merchant' }),
    name: identifier.openapi({ example: 'Welcome free bets' }),
    status: z.enum(configurationStatuses),
    rewardType: z.enum(rewardTypes),
    numberOfFreeBets: z.number().int().min(1).max(INT32_MAX),
    startDate: instantSchema,
    endDate: instantSchema,
    duration: z.number().int().min(1).max(INT32_MAX).openapi({ description: 'Minutes' }),
    games: z.array(GameInputSchema).min(1).max(1_000),
  })
  .superRefine((body, ctx) => {
    // Refinements also run when a field already failed; compare only two valid dates.
    const datesValid = body.startDate instanceof Date && body.endDate instanceof Date;
    if (datesValid && body.endDate.getTime() < body.startDate.getTime()) {
      ctx.addIssue({ code: 'custom', path: ['endDate'], message: 'must not be before startDate' });
    }
    const seen = new Set<number>();
    body.games.forEach((game, index) => {
      if (seen.has(game.gameId)) {
        ctx.addIssue({ code: 'custom', path: ['games', index, 'gameId'], message: 'duplicate gameId' });
      }
      seen.add(game.gameId);
    });
  })
  .openapi('AdminCreateRewardConfigurationRequest');

export function registerCreateRewardConfiguration(app: App): void {
  const route = createRoute({
    method: 'post',
    path: '/admin/v1/merchants/{merchantId}/reward-configurations',
    operationId: 'adminCreateRewardConfiguration',
    ...adminRouteMeta,
    summary: 'Create a reward configuration with its games and bet constraints',
    description: 'Answers the configuration exactly as readAll shows it.',
    request: { params: MerchantIdParamsSchema, body: jsonBody(CreateRewardConfigurationRequestSchema) },
    responses: {
      201: {
        description: 'The configuration as readAll shows it',
        content: { 'application/json': { schema: RewardConfigurationSchema } },
      },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const merchantId = c.req.valid('param').merchantId.toLowerCase();
    const body = c.req.valid('json');
    const { db } = c.get('deps');
    await requireMerchant(db, merchantId);

    let id: string;
    try {
      id = await db.transaction().execute(async (trx) => {
        const created = await insertRewardConfiguration(trx, {
          merchantId,
          externalId: body.externalId ?? null,
          name: body.name,
          status: body.status,
          rewardType: body.rewardType,
          numberOfFreeBets: body.numberOfFreeBets,
          startDate: body.startDate,
          endDate: body.endDate,
          durationMinutes: body.duration,
          games: body.games,
        });
        await auditAdminWrite(c, trx, {
          action: 'reward-configuration.create',
          target: merchantId,
          after: { id: created, externalId: body.externalId ?? null, name: body.name, status: body.status },
        });
        return created;
      });
    } catch (error) {
      if (isUniqueViolation(error, CONFIGURATION_EXTERNAL_ID_KEY)) {
        throw new AppError(
          'INVALID_REQUEST',
          'externalId: the merchant already has a configuration with this externalId',
        );
      }
      throw error;
    }

    c.get('deps').readAllCache.forgetMerchant(merchantId);
    const configuration = await selectConfigurationJson(db, merchantId, id);
    if (configuration === undefined) throw new Error(`configuration ${id} not found right after it was created`);
    c.get('logger').info({ merchantId, rewardConfigurationId: id }, 'reward configuration created');
    // Postgres wrote it, as for readAll: the amounts keep their exact decimal text.
    return rawJson(c, RewardConfigurationSchema, configuration, 201);
  });
}
