import { createRoute, z } from '@hono/zod-openapi';
import { JobStatusSchema } from '../../shared/job-status-schema.js';
import { toPublicStatus } from '../../shared/jobs/public-status.js';
import { operations } from '../../shared/queue/job-catalogue.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { statusFromRow } from '../jobs/job-status.js';
import type { MerchantRouteMiddleware } from '../middleware/merchant-auth.middleware.js';
import { listMerchantJobs } from '../repositories/merchant-jobs.repository.js';
import { jsonBody, merchantErrorResponses, signedFields } from '../schemas.js';

const MAX_PAGE = 1_000;
const DEFAULT_PAGE = 100;
/** The states a listed job can be in: a job is listed from the moment a worker takes it. */
const listedStates = ['running', 'completed', 'failed', 'cancelling', 'cancelled'] as const;

const ListJobsRequestSchema = z
  .object({
    ...signedFields,
    states: z
      .array(z.enum(listedStates))
      .min(1)
      .nullish()
      .openapi({ description: 'Only jobs in one of these states (default: all)' }),
    operations: z
      .array(z.enum(operations))
      .min(1)
      .nullish()
      .openapi({ description: 'Only jobs of these kinds (default: all)' }),
    after: uuidSchema().nullish().openapi({ description: "The previous page's `next`; absent for the first page" }),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE)
      .nullish()
      .openapi({ description: `Jobs per page, 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE})` }),
  })
  .openapi('ListJobsRequest');

const JobsPageSchema = z
  .object({
    jobs: z.array(JobStatusSchema),
    next: uuidSchema()
      .nullable()
      .openapi({ description: 'The `after` of the next page; null when this page is the last' }),
  })
  .openapi('JobsPage');

export function registerListJobs(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: '/api/v1/integration/jobs/list',
    operationId: 'listJobs',
    tags: ['Cancellation'],
    summary: "The merchant's cancellation jobs, newest first, page by page",
    description:
      'Keyset pages, newest first (by creation, then id): pass `next` as `after` for the following page. ' +
      'Filters: `states` and `operations`. Lists the jobs the service has a record of: a job appears once a ' +
      'worker has taken it (normally within a second; a bulk job waiting behind others later: find it by ' +
      'its id with jobs/status meanwhile) and disappears once it finished more than the retention ' +
      '(RETENTION_MS, 30 days) ago. `progress` of a running job is its last recorded one: jobs/status has ' +
      'the live figure.',
    middleware: auth,
    request: { body: jsonBody(ListJobsRequestSchema) },
    responses: {
      200: { description: 'One page', content: { 'application/json': { schema: JobsPageSchema } } },
      ...merchantErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    const { db, config } = c.get('deps');
    const limit = body.limit ?? DEFAULT_PAGE;
    const rows = await listMerchantJobs(db, {
      merchantId: c.get('merchant').id,
      states: body.states ?? undefined,
      operations: body.operations ?? undefined,
      after: body.after?.toLowerCase() ?? undefined,
      finishedAfter: new Date(Date.now() - config.RETENTION_MS),
      limit,
    });
    const page = rows.slice(0, limit);
    const next = rows.length > limit ? (page.at(-1)?.id ?? null) : null;
    return c.json({ jobs: page.map((row) => toPublicStatus(statusFromRow(row))), next }, 200);
  });
}
