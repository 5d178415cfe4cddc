import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../shared/errors.js';
import { JobStatusSchema } from '../../shared/job-status-schema.js';
import { withdraw, withdrawnAnnounced } from '../../shared/jobs/job-outcome.js';
import { isFinished, toPublicStatus } from '../../shared/jobs/public-status.js';
import { requestAbort } from '../../shared/queue/job-abort.js';
import { jobIdSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { findJobStatus, primaryJobRecords } from '../jobs/job-status.js';
import type { MerchantRouteMiddleware } from '../middleware/merchant-auth.middleware.js';
import { errorResponse, jsonBody, merchantErrorResponses, signedFields } from '../schemas.js';

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
    const { redis, config, db, producer, shards } = c.get('deps');
    const merchantId = c.get('merchant').id;
    const status = await findJobStatus(redis, shards, primaryJobRecords(db), jobId, config.RETENTION_MS, merchantId);
    // Another merchant's job is as unknown as a job that never existed.
    if (!status || status.merchantId !== merchantId) throw new AppError('NOT_FOUND', 'Job not found');
    if (isFinished(status.state)) throw new AppError('CONFLICT', `Job has already finished: ${status.state}`);

    // The mark first: a worker that takes the job from now on stops before its first batch.
    // A job whose worker has just decided its end (completed) between the read above and now is refused.
    if (!(await requestAbort(redis, shards, jobId)))
      throw new AppError('CONFLICT', 'Job has already finished: completed');
    // A job that never reached a worker is finished here (job-outcome.ts), a running one by the worker that stops it.
    const withdrawn =
      status.state === 'queued' &&
      (await withdraw(c.get('deps'), status, () => producer.withdraw(status.operation, merchantId, jobId)));
    c.set('jobId', jobId);
    const after = toPublicStatus(
      (await findJobStatus(redis, shards, primaryJobRecords(db), jobId, config.RETENTION_MS, merchantId)) ?? status,
    );
    if (withdrawn) await withdrawnAnnounced(c.get('deps'), merchantId, after);
    // Streams of this job on every API process read it again (a withdrawn single cancel has no queue event).
    await c
      .get('deps')
      .jobEvents.announceAborted(jobId, status.operation)
      .catch((error: unknown) => c.get('logger').warn({ err: error }, 'job event streams not told of the abort'));
    return c.json(after, 200);
  });
}
