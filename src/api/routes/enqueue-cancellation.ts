import type { Context } from 'hono';
import type { JobPayload, MerchantJobName } from '../../shared/queue/job-catalogue.js';
import type { AppEnv } from '../context.js';

/**
 * The common end of the three cancel routes: store the job, then answer 200 with an empty body and
 * the job id. Nothing is answered 200 before Redis has stored the job (DESIGN §5).
 */
export async function enqueueAndAnswer<N extends MerchantJobName>(
  c: Context<AppEnv>,
  name: N,
  payload: JobPayload<N>,
  deduplicationId: string,
): Promise<Response> {
  const { producer, config } = c.var.deps;
  const { jobId, shared } = await producer.enqueue(
    name,
    payload,
    deduplicationId,
    c.var.merchant.maxQueuedJobs ?? config.MAX_QUEUED_JOBS,
  );
  c.set('jobId', jobId);
  if (shared) c.var.logger.info({ jobId, operation: name }, 'identical waiting request: job shared');
  c.header('X-Job-Id', jobId);
  return c.body(null, 200);
}

export const acceptedResponse = {
  description: 'Accepted: the job is stored and will run. Empty body.',
  headers: {
    'X-Job-Id': {
      description: 'Id of the cancellation job; see POST /api/v1/integration/jobs/status',
      schema: { type: 'string' as const },
    },
  },
};
