import type { Context } from 'hono';
import type { Operation } from '../../shared/queue/job-catalogue.js';
import type { AppEnv } from '../context.js';
import { claimIdempotencyKey, type IdempotencyClaim, requestFingerprint } from '../idempotency.js';
import type { OperationPayload } from '../jobs/producer.js';
import { errorResponse } from '../schemas.js';
import { type EmptyOk, emptyOk } from '../typed-responses.js';

/** What the route validated: the body (the fields an idempotency key is bound to) and the key, if sent. */
export interface CancelRequest {
  fields: Record<string, unknown>;
  idempotencyKey: string | undefined;
}

/**
 * The common end of the three cancel routes: store the job, then answer 200 with an empty body and
 * the job id. Nothing is answered 200 before Redis has stored the job. With an Idempotency-Key, a
 * repeat of a stored request answers the stored job id instead, and queues nothing.
 */
export async function enqueueAndAnswer<N extends Operation>(
  c: Context<AppEnv>,
  name: N,
  payload: OperationPayload<N>,
  deduplicationId: string,
  request: CancelRequest,
): Promise<EmptyOk> {
  const { producer, config, redis } = c.get('deps');
  let claim: IdempotencyClaim | null = null;
  if (request.idempotencyKey !== undefined) {
    const store = { redis, prefix: config.QUEUE_PREFIX, timeoutMs: config.ENQUEUE_TIMEOUT_MS };
    claim = await claimIdempotencyKey(
      store,
      c.get('merchant').id,
      request.idempotencyKey,
      requestFingerprint(name, request.fields),
    );
    if (claim.replayedJobId !== undefined) {
      c.set('jobId', claim.replayedJobId);
      c.header('X-Job-Id', claim.replayedJobId);
      c.header('Idempotent-Replayed', 'true');
      return emptyOk(c);
    }
  }

  let jobId: string;
  try {
    const enqueued = await producer.enqueue(
      name,
      payload,
      deduplicationId,
      c.get('merchant').maxQueuedJobs ?? config.MAX_QUEUED_JOBS,
    );
    jobId = enqueued.jobId;
    if (enqueued.shared) c.get('logger').info({ jobId, operation: name }, 'identical waiting request: job shared');
  } catch (error) {
    // No job was stored: free the key so that the merchant's retry is not refused as in flight.
    await claim?.release().catch((releaseError: unknown) => {
      c.get('logger').warn({ err: releaseError }, 'idempotency key not released; it expires by itself');
    });
    throw error;
  }
  if (claim) {
    // The job is stored and will run: the answer is 200 even if the record cannot be written (its
    // unfinished form expires within 30 s, after which the key is free again). Logged, as a
    // repeat in that window could then queue a second job.
    await claim.complete(jobId).catch((recordError: unknown) => {
      c.get('logger').warn({ err: recordError, jobId }, 'idempotency record not written');
    });
  }
  c.set('jobId', jobId);
  c.header('X-Job-Id', jobId);
  return emptyOk(c);
}

export const acceptedResponse = {
  description:
    'Accepted: the job is stored and will run. Empty body. A repeat under the same Idempotency-Key ' +
    "answers the first request's job id with Idempotent-Replayed: true.",
  headers: {
    'X-Job-Id': {
      description: 'Id of the cancellation job; see POST /api/v1/integration/jobs/status',
      schema: { type: 'string' as const },
    },
    'Idempotent-Replayed': {
      description: 'true when this answer repeats an earlier request with the same Idempotency-Key',
      schema: { type: 'string' as const, enum: ['true'] },
    },
  },
};

/** The answers an Idempotency-Key adds to a cancel route. */
export const idempotencyErrorResponses = {
  409: errorResponse(
    'CONFLICT (13): the first request with this Idempotency-Key is still being stored; see Retry-After',
  ),
  422: errorResponse('IDEMPOTENCY_CONFLICT (12): this Idempotency-Key was used with other request fields'),
} as const;
