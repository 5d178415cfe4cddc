import { createRoute, z } from '@hono/zod-openapi';
import { operations } from '../../shared/db/schema.js';
import { JobStatusSchema } from '../../shared/jobs/job-status-schema.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App } from '../context.js';
import { jsonBody, merchantErrorResponses, signedFields } from '../http/schemas.js';
import { LIST_JOBS_DEFAULT_PAGE, LIST_JOBS_MAX_PAGE, listedStates, listJobsPage } from './list-jobs.js';
import { nextPageField, pageRequestFields, requestedPage } from './page-fields.js';

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
    ...pageRequestFields(uuidSchema(), { items: 'Jobs', max: LIST_JOBS_MAX_PAGE, default: LIST_JOBS_DEFAULT_PAGE }),
  })
  .openapi('ListJobsRequest');

const JobsPageSchema = z
  .object({
    jobs: z.array(JobStatusSchema),
    next: nextPageField(uuidSchema()),
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
    const page = await listJobsPage(c.get('deps'), c.get('merchant').id, {
      states: body.states ?? undefined,
      operations: body.operations ?? undefined,
      ...requestedPage(body),
    });
    return c.json(page, 200);
  });
}
