import { createRoute, z } from '@hono/zod-openapi';
import { jobIdSchema, uuidSchema } from '../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App } from '../context.js';
import { errorResponse, jsonBody, merchantErrorResponses, signedFields } from '../http/schemas.js';
import { JOB_PAGE_DEFAULT, JOB_PAGE_MAX, jobRewardsPage } from './job-pages.js';
import { nextPageField, pageRequestFields, requestedPage } from './page-fields.js';

const JobRewardsRequestSchema = z
  .object({
    ...signedFields,
    jobId: jobIdSchema().openapi({ description: 'The X-Job-Id of a cancel answer' }),
    ...pageRequestFields(uuidSchema(), { items: 'Rewards', max: JOB_PAGE_MAX, default: JOB_PAGE_DEFAULT }),
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
    next: nextPageField(uuidSchema()),
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
    const body = c.req.valid('json');
    const page = await jobRewardsPage(c.get('deps'), c.get('merchant').id, {
      jobId: body.jobId,
      ...requestedPage(body),
    });
    return c.json(page, 200);
  });
}
