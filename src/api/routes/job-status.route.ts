import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../shared/errors.js';
import { findJobStatus, type JobStatus } from '../../shared/job-status.js';
import type { App } from '../context.js';
import type { MerchantRouteMiddleware } from '../middleware/merchant-auth.middleware.js';
import { errorResponse, jsonBody, merchantErrorResponses, signedFields } from '../schemas.js';

export const JobStatusRequestSchema = z
  .object({
    ...signedFields,
    jobId: z.string().min(1).max(128).openapi({ description: 'The X-Job-Id of a cancel answer' }),
  })
  .openapi('JobStatusRequest');

export const JobStatusSchema = z
  .object({
    jobId: z.string(),
    operation: z.enum(['cancel', 'bulkCancel', 'bulkCancelByQuery']),
    state: z.enum(['queued', 'running', 'completed', 'failed']),
    createdAt: z.number().int().openapi({ description: 'Epoch milliseconds' }),
    startedAt: z.number().int().nullable(),
    finishedAt: z.number().int().nullable(),
    progress: z.number().min(0).max(100).openapi({ description: 'Percent done' }),
    result: z
      .record(z.string(), z.number().int())
      .nullable()
      .openapi({
        description:
          'requested, cancelled, alreadyCancelled, notCancellable, notFound; for bulkCancelByQuery: players, cancelled',
        example: { requested: 3, cancelled: 2, alreadyCancelled: 0, notCancellable: 1, notFound: 0 },
      }),
    error: z.string().nullable(),
  })
  .openapi('JobStatus');

/** The merchant-visible shape: the merchant id is implied by the signature, so it is left out. */
export function publicJobStatus({ merchantId: _merchantId, ...status }: JobStatus) {
  return status as z.infer<typeof JobStatusSchema>;
}

export function registerJobStatus(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: '/api/v1/integration/jobs/status',
    tags: ['Cancellation'],
    summary: 'Status and result counts of a cancellation job',
    middleware: auth,
    request: { body: jsonBody(JobStatusRequestSchema) },
    responses: {
      200: { description: 'The job', content: { 'application/json': { schema: JobStatusSchema } } },
      404: errorResponse('NOT_FOUND (10): no such job for this merchant'),
      ...merchantErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const { jobId } = c.req.valid('json');
    const { producer, db } = c.var.deps;
    const status = await findJobStatus(Object.values(producer.queues), db, jobId);
    // Another merchant's job is as unknown as a job that never existed.
    if (!status || status.merchantId !== c.var.merchant.id) throw new AppError('NOT_FOUND', 'Job not found');
    return c.json(publicJobStatus(status), 200);
  });
}
