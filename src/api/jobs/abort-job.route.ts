import { createRoute, z } from '@hono/zod-openapi';
import { JobStatusSchema } from '../../shared/jobs/job-status-schema.js';
import { jobIdSchema } from '../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App } from '../context.js';
import { errorResponse, jsonBody, merchantErrorResponses, signedFields } from '../http/schemas.js';
import { abortMerchantJob } from './abort-job.js';

const AbortJobRequestSchema = z
  .object({
    ...signedFields,
    jobId: jobIdSchema().openapi({ description: 'The X-Job-Id of a cancel answer' }),
  })
  .openapi('AbortJobRequest');

/**
 * Abort a job. A queued job is taken out of its queue and is `cancelled` at once. A running one is
 * marked: whichever worker runs it (or any of its parts) stops before its next batch, so it becomes
 * `cancelling`, then `cancelled` once the batch in flight has committed; rewards cancelled before stay
 * cancelled and are counted in its result.
 */
export function registerAbortJob(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: '/api/v1/integration/jobs/cancel',
    operationId: 'abortJob',
    tags: ['Cancellation'],
    summary: 'Abort a cancellation job',
    description:
      'A queued job is cancelled at once; a running one stops after the batch in flight (state cancelling, then ' +
      'cancelled). What was applied stays applied and is counted in result. Answers the job status.',
    middleware: auth,
    request: { body: jsonBody(AbortJobRequestSchema) },
    responses: {
      200: { description: 'The job after the abort', content: { 'application/json': { schema: JobStatusSchema } } },
      404: errorResponse('NOT_FOUND (10): no such job for this merchant'),
      409: errorResponse('CONFLICT (13): the job has already finished (completed, failed or cancelled)'),
      ...merchantErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const { jobId } = c.req.valid('json');
    const after = await abortMerchantJob(c.get('deps'), c.get('merchant').id, jobId, c.get('logger'));
    c.set('jobId', jobId);
    return c.json(after, 200);
  });
}
