import { z } from '@hono/zod-openapi';
import { operations } from '../db/schema.js';
import { uuidSchema } from '../wire-rules.js';

/**
 * The one declaration of a job's status on the wire: the job-status route validates and documents
 * with it, the admin view extends it, and tests and benchmarks infer their types from it.
 */
export const JobStatusSchema = z
  .object({
    jobId: z.string(),
    operation: z.enum(operations),
    state: z.enum(['queued', 'running', 'completed', 'failed', 'cancelling', 'cancelled']).openapi({
      description:
        'cancelling: an abort was asked while the job ran; it stops after the batch in flight. cancelled: stopped ' +
        'by an abort (the rewards cancelled before stay cancelled and are counted in result)',
    }),
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
    error: z.string().nullable().openapi({
      description: 'A short generic sentence when the job failed or an attempt failed; details stay in the logs',
    }),
  })
  .openapi('JobStatus');

export type PublicJobStatus = z.infer<typeof JobStatusSchema>;

/** The admin view: whose job it is, and the error as the worker saw it. */
export const AdminJobStatusSchema = JobStatusSchema.extend({ merchantId: uuidSchema() }).openapi('AdminJobStatus');

export type JobStatus = z.infer<typeof AdminJobStatusSchema>;
export type JobStateName = JobStatus['state'];
