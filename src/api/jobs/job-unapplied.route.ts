import { createRoute, z } from '@hono/zod-openapi';
import { IDENTIFIER_MAX_LENGTH, jobIdSchema } from '../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App } from '../context.js';
import { errorResponse, jsonBody, merchantErrorResponses, signedFields } from '../http/schemas.js';
import { JOB_PAGE_DEFAULT, JOB_PAGE_MAX, jobUnappliedPage } from './job-pages.js';
import { nextPageField, pageRequestFields, requestedPage } from './page-fields.js';

const kinds = ['id', 'externalId'] as const;
const outcomes = ['notFound', 'notCancellable', 'alreadyCancelled'] as const;

const UnappliedCursorSchema = z
  .object({
    kind: z.enum(kinds),
    identifier: z.string().min(1).max(IDENTIFIER_MAX_LENGTH),
  })
  .openapi('UnappliedCursor', { description: 'Where a page starts: the `next` of the page before, as it came' });

const JobUnappliedRequestSchema = z
  .object({
    ...signedFields,
    jobId: jobIdSchema().openapi({ description: 'The X-Job-Id of a bulkCancel answer' }),
    ...pageRequestFields(UnappliedCursorSchema, { items: 'Identifiers', max: JOB_PAGE_MAX, default: JOB_PAGE_DEFAULT }),
  })
  .openapi('JobUnappliedRequest');

const JobUnappliedPageSchema = z
  .object({
    identifiers: z.array(
      z.object({
        kind: z.enum(kinds).openapi({ description: 'Which list of the request named it: `ids` or `externalIds`' }),
        identifier: z.string().openapi({ description: 'The id or external id as the request gave it' }),
        outcome: z.enum(outcomes).openapi({
          description:
            '`notFound`: no reward of yours has it; `notCancellable`: the reward is USED or EXPIRED; ' +
            '`alreadyCancelled`: another job or cancel had cancelled it before this job reached it',
        }),
      }),
    ),
    next: nextPageField(UnappliedCursorSchema),
  })
  .openapi('JobUnappliedPage');

/**
 * `POST /api/v1/integration/jobs/unapplied`: the per-identifier outcome of a bulkCancel, for what it did
 * not cancel (what it cancelled is `jobs/rewards`). Counts alone (`jobs/status`) say how many; this says
 * which, so a merchant can reconcile its own records without asking for every reward.
 */
export function registerJobUnapplied(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: '/api/v1/integration/jobs/unapplied',
    operationId: 'listJobUnapplied',
    tags: ['Cancellation'],
    summary: 'The identifiers a bulkCancel did not cancel, and why, page by page',
    description:
      'For a bulkCancel job: each id or external id it did not cancel, with its outcome (`notFound`, ' +
      '`notCancellable`, `alreadyCancelled`), ordered by kind then identifier. Pass `next` as `after` for ' +
      'the following page. A job still running lists the batches it has done so far; a finished job lists ' +
      'them all, and the counts of its status are these entries by outcome (an identifier named twice ' +
      'counts twice but is listed once). Identifiers the job cancelled are in `jobs/rewards`. Other kinds ' +
      'of job list nothing: a bulkCancelByQuery names no identifiers, and a single cancel states its ' +
      'outcome in its status.',
    middleware: auth,
    request: { body: jsonBody(JobUnappliedRequestSchema) },
    responses: {
      200: { description: 'One page', content: { 'application/json': { schema: JobUnappliedPageSchema } } },
      404: errorResponse('NOT_FOUND (10): no such job for this merchant'),
      ...merchantErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    const page = await jobUnappliedPage(c.get('deps'), c.get('merchant').id, {
      jobId: body.jobId,
      ...requestedPage(body),
    });
    return c.json(page, 200);
  });
}
