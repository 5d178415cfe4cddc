import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../shared/errors.js';
import { hasDeferredSlices, listJobRewards } from '../../shared/repositories/job-rewards.repository.js';
import { jobIdSchema, uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { readJobListingPage } from '../jobs/job-listing-page.js';
import type { MerchantRouteMiddleware } from '../middleware/merchant-auth.middleware.js';
import { errorResponse, jsonBody, merchantErrorResponses, signedFields } from '../schemas.js';

const MAX_PAGE = 10_000;
const DEFAULT_PAGE = 1_000;

const JobRewardsRequestSchema = z
  .object({
    ...signedFields,
    jobId: jobIdSchema().openapi({ description: 'The X-Job-Id of a cancel answer' }),
    after: uuidSchema().nullish().openapi({ description: "The previous page's `next`; absent for the first page" }),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE)
      .nullish()
      .openapi({ description: `Rewards per page, 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE})` }),
  })
  .openapi('JobRewardsRequest');

const JobRewardsPageSchema = z
  .object({
    rewards: z.array(
      z.object({
        id: uuidSchema(),
        externalId: z.string().nullable().openapi({ description: "The merchant's own id of the reward" }),
        playerId: z.string(),
      }),
    ),
    next: uuidSchema()
      .nullable()
      .openapi({ description: 'The `after` of the next page; null when this page is the last' }),
  })
  .openapi('JobRewardsPage');

export function registerJobRewards(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: '/api/v1/integration/jobs/rewards',
    operationId: 'listJobRewards',
    tags: ['Cancellation'],
    summary: 'The rewards a cancellation job cancelled, page by page',
    description:
      'The rewards that carry this job as their canceller, in id order. Pass `next` as `after` for the ' +
      'following page. A job still running lists what it has listed so far. A bulkCancelByQuery job ' +
      'lists its rewards as it ends: a large one (over 10,000 rewards) moments after it completed, and ' +
      'until then (or while it runs) its pages answer 409 with Retry-After.',
    middleware: auth,
    request: { body: jsonBody(JobRewardsRequestSchema) },
    responses: {
      200: { description: 'One page', content: { 'application/json': { schema: JobRewardsPageSchema } } },
      404: errorResponse('NOT_FOUND (10): no such job for this merchant'),
      409: errorResponse("CONFLICT (13): the job's rewards are still being listed; see Retry-After"),
      ...merchantErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const { jobId, after, limit } = c.req.valid('json');
    const page = await readJobListingPage(c, jobId, 'jobRewards', async (db, job) => {
      // Read only: the worker lists a by-query job's slices; a page before that would miss rewards.
      if (await hasDeferredSlices(db, job)) {
        throw new AppError('CONFLICT', "The job's rewards are still being listed", { retryAfterSeconds: 1 });
      }
      return listJobRewards(db, { ...job, after: after?.toLowerCase() ?? undefined, limit: limit ?? DEFAULT_PAGE });
    });
    return c.json(page, 200);
  });
}
