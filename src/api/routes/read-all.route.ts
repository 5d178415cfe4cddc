import { createRoute, z } from '@hono/zod-openapi';
import { configurationStatuses, rewardTypes } from '../../shared/db/schema.js';
import {
  countConfigurations,
  selectConfigurationsJson,
} from '../../shared/repositories/reward-configurations.repository.js';
import type { App } from '../context.js';
import type { MerchantRouteMiddleware } from '../middleware/merchant-auth.middleware.js';
import { readAllCacheKey } from '../read-all-cache.js';
import { jsonBody, merchantErrorResponses, signedFields } from '../schemas.js';

// Every filter is optional, and `null` counts as absent: clients that serialise every field of their
// request class send `"name": null` for "no name filter" (as for the cancel routes' lists).
export const ReadAllRequestSchema = z
  .object({
    ...signedFields,
    name: z
      .string()
      .max(255)
      // Postgres text cannot hold NUL: without this the query fails and the caller gets a 500.
      .refine((name) => !name.includes('\u0000'), 'must not contain NUL characters')
      .nullish()
      .openapi({ description: 'Case-insensitive substring of the name' }),
    status: z.enum(configurationStatuses).nullish(),
    rewardType: z.enum(rewardTypes).nullish(),
    limit: z.number().int().min(1).max(1_000).nullish().openapi({ description: 'Page size (beyond the interface)' }),
    offset: z.number().int().min(0).nullish().openapi({ description: 'Matches to skip (beyond the interface)' }),
  })
  .openapi('ReadAllRequest');

const BetConstraintSchema = z.object({
  betAmount: z.number().openapi({ example: 0.5 }),
  maxWinPerBet: z.number().openapi({ example: 100 }),
});

export const RewardConfigurationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    status: z.enum(configurationStatuses),
    rewardType: z.enum(rewardTypes),
    numberOfFreeBets: z.number().int(),
    startDate: z.number().int().openapi({ description: 'Epoch milliseconds' }),
    endDate: z.number().int().openapi({ description: 'Epoch milliseconds' }),
    duration: z.number().int().openapi({ description: 'Minutes' }),
    merchantId: z.uuid(),
    games: z.array(
      z.object({
        id: z.uuid(),
        gameId: z.number().int(),
        betConstraints: z.record(z.string().regex(/^[A-Z]{3}$/), BetConstraintSchema).openapi({
          description: 'Keyed by ISO 4217 currency code',
          example: { EUR: { betAmount: 0.5, maxWinPerBet: 100 } },
        }),
      }),
    ),
  })
  .openapi('RewardConfiguration');

export function readAllRoute(auth: MerchantRouteMiddleware) {
  return createRoute({
    method: 'post',
    path: '/api/v1/integration/reward-configurations/readAll',
    tags: ['Reward configurations'],
    summary: 'List the merchant reward configurations',
    description:
      'Filters combine with AND. Ordered by startDate descending, then id. With `limit`, the ' +
      '`X-Total-Count` header gives the number of matches.',
    middleware: auth,
    request: { body: jsonBody(ReadAllRequestSchema) },
    responses: {
      200: {
        description: 'The matching configurations (an empty array when none match)',
        headers: z.object({ 'X-Total-Count': z.string().optional() }),
        content: { 'application/json': { schema: z.array(RewardConfigurationSchema) } },
      },
      ...merchantErrorResponses,
    },
  });
}

export function registerReadAll(app: App, auth: MerchantRouteMiddleware): void {
  app.openapi(readAllRoute(auth), async (c) => {
    const request = c.req.valid('json');
    const filter = {
      merchantId: c.var.merchant.id,
      name: request.name ?? undefined,
      status: request.status ?? undefined,
      rewardType: request.rewardType ?? undefined,
    };
    const limit = request.limit ?? undefined;
    const offset = request.offset ?? undefined;
    const { db, readAllCache } = c.var.deps;
    const paged = limit !== undefined || offset !== undefined;
    const page = paged ? { limit: limit ?? 1_000, offset: offset ?? 0 } : undefined;
    const key = readAllCacheKey({ ...filter, page });
    const { body, total } = await readAllCache.get(filter.merchantId, key, async () => {
      const [json, count] = await Promise.all([
        selectConfigurationsJson(db, filter, page),
        paged ? countConfigurations(db, filter) : Promise.resolve(undefined),
      ]);
      return { body: json, total: count };
    });
    if (total !== undefined) c.header('X-Total-Count', String(total));
    c.header('Content-Type', 'application/json');
    // Postgres built the JSON; re-parsing it only to re-serialise would cost time and precision.
    return c.body(body, 200) as never;
  });
}
