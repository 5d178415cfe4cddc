import { createRoute, z } from '@hono/zod-openapi';
import { configurationStatuses, rewardTypes } from '../../shared/db/schema.js';
import { IDENTIFIER_MAX_LENGTH, withoutNul } from '../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App } from '../context.js';
import { jsonBody, merchantErrorResponses, RewardConfigurationSchema, signedFields } from '../http/schemas.js';
import { rawJson } from '../http/typed-responses.js';
import { readAllCacheKey } from './read-all-cache.js';
import { countConfigurations, selectConfigurationsJson } from './reward-configurations.repository.js';

// Every filter is optional, and `null` counts as absent: clients that serialise every field of their
// request class send `"name": null` for "no name filter" (as for the cancel routes' lists).
const ReadAllRequestSchema = z
  .object({
    ...signedFields,
    name: withoutNul(z.string().max(IDENTIFIER_MAX_LENGTH))
      .nullish()
      .openapi({ description: 'Case-insensitive substring of the name' }),
    status: z.enum(configurationStatuses).nullish(),
    rewardType: z.enum(rewardTypes).nullish(),
    limit: z.number().int().min(1).max(1_000).nullish().openapi({ description: 'Page size (beyond the interface)' }),
    // Stated, not new: zod's int() has always stopped at the largest safe integer.
    offset: z
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .nullish()
      .openapi({ description: 'Matches to skip (beyond the interface)' }),
  })
  .openapi('ReadAllRequest');

const ReadAllResponseSchema = z.array(RewardConfigurationSchema);

/** Exact-size bytes: a small Buffer.from would be a slice of Node's shared 8 KiB pool, kept whole by the cache. */
const utf8 = new TextEncoder();

function readAllRoute(auth: MerchantRouteMiddleware) {
  return createRoute({
    method: 'post',
    path: '/api/v1/integration/reward-configurations/readAll',
    operationId: 'readAllRewardConfigurations',
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
        content: { 'application/json': { schema: ReadAllResponseSchema } },
      },
      ...merchantErrorResponses,
    },
  });
}

export function registerReadAll(app: App, auth: MerchantRouteMiddleware): void {
  app.openapi(readAllRoute(auth), async (c) => {
    const request = c.req.valid('json');
    const filter = {
      merchantId: c.get('merchant').id,
      name: request.name ?? undefined,
      status: request.status ?? undefined,
      rewardType: request.rewardType ?? undefined,
    };
    const limit = request.limit ?? undefined;
    const offset = request.offset ?? undefined;
    const { reads, readAllCache } = c.get('deps');
    const paged = limit !== undefined || offset !== undefined;
    const page = paged ? { limit: limit ?? 1_000, offset: offset ?? 0 } : undefined;
    const key = readAllCacheKey({ ...filter, page });
    const { body, total } = await readAllCache.get(filter.merchantId, key, async () => {
      // Configurations change rarely and a second of lag is invisible here: the replica when it keeps up.
      return reads.read('readAll', async (db) => {
        const [json, count] = await Promise.all([
          selectConfigurationsJson(db, filter, page),
          paged ? countConfigurations(db, filter) : Promise.resolve(undefined),
        ]);
        return { body: utf8.encode(json), total: count };
      });
    });
    if (total !== undefined) c.header('X-Total-Count', String(total));
    // Postgres built the JSON; re-parsing it only to re-serialise would cost time and precision.
    return rawJson(c, ReadAllResponseSchema, body, 200);
  });
}
