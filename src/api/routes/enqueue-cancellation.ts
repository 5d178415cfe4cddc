import type { Context } from 'hono';
import type { Operation } from '../../shared/queue/job-catalogue.js';
import { runInContext } from '../../shared/telemetry/trace-context.js';
import type { AppEnv } from '../context.js';
import {
  claimIdempotencyKey,
  claimSignatureReplay,
  type IdempotencyClaim,
  requestFingerprint,
} from '../idempotency.js';
import { isStoreOutcomeUnknown, type OperationPayload } from '../jobs/producer.js';
import { errorResponse } from '../schemas.js';
import { type AcceptedOk, accepted } from './cancel-answer.js';

/** What the route validated: the body (the fields an idempotency key is bound to) and the key, if sent. */
export interface CancelRequest {
  fields: Record<string, unknown>;
  idempotencyKey: string | undefined;
}

/**
 * The common end of the three cancel routes: store the job, then answer 200 with the job id in X-Job-Id
 * (cancel-answer.ts says in which form). Nothing is answered 200 before Redis has stored the job. A repeat of a stored request
 * answers the stored job id instead, and queues nothing: a repeat under the same Idempotency-Key, and
 * a version-2 request sent again with the same X-Signature (its replay record, idempotency.ts), which
 * the header itself cannot be changed to avoid (it is not signed).
 */
export async function enqueueAndAnswer<N extends Operation>(
  c: Context<AppEnv>,
  name: N,
  payload: OperationPayload<N>,
  deduplicationId: string,
  request: CancelRequest,
): Promise<AcceptedOk> {
  const { producer, config, shards } = c.get('deps');
  // A bulk job's id is chosen before anything is stored, so a record can name it even if the store times out.
  const plannedJobId = name === 'cancel' ? undefined : shards.newJobId(c.get('merchant').id);
  const claims = await claimRecords(c, name, request, plannedJobId);
  if ('replayedJobId' in claims) {
    c.header('Idempotent-Replayed', 'true');
    return accepted(c, claims.replayedJobId);
  }

  let jobId: string;
  try {
    const enqueue = () =>
      producer.enqueue(
        name,
        payload,
        deduplicationId,
        c.get('merchant').maxQueuedJobs ?? config.MAX_QUEUED_JOBS,
        plannedJobId,
      );
    // Inside the request's trace context (http/server-span.ts), sampled or not: the enqueue span is the
    // server span's child, and the job carries the request's sampling decision to the worker.
    const traceContext = c.get('traceContext');
    const enqueued = await (traceContext === undefined ? enqueue() : runInContext(traceContext, enqueue));
    jobId = enqueued.jobId;
    if (enqueued.shared) c.get('logger').info({ jobId, operation: name }, 'identical waiting request: job shared');
  } catch (error) {
    // The job may be stored under its planned id (a timeout): the records keep naming it, so a retry
    // answers that id and never queues a second job. Certainly not stored: the records are freed, so
    // the merchant's retry is not refused as in flight.
    if (plannedJobId === undefined || !isStoreOutcomeUnknown(error)) await releaseAll(c, claims.held);
    throw error;
  }
  // The job is stored and will run: the answer is 200 even if a record cannot be written (a planned
  // id's pending record answers it anyway; a single cancel's expires within 30 s, after which a repeat
  // could queue a second single cancel, which changes nothing more). Logged.
  await Promise.all(
    claims.held.map((claim) =>
      claim.complete(jobId).catch((recordError: unknown) => {
        c.get('logger').warn({ err: recordError, jobId }, 'idempotency record not written');
      }),
    ),
  );
  return accepted(c, jobId);
}

type HeldClaim = Exclude<IdempotencyClaim, { replayedJobId: string }>;

/**
 * The records this request is answered from when it is sent again: its X-Signature's (version 2) and
 * its Idempotency-Key's. Either one naming a job makes the request a replay of that job (the other
 * record, if held, is completed with it).
 */
async function claimRecords(
  c: Context<AppEnv>,
  name: Operation,
  request: CancelRequest,
  plannedJobId: string | undefined,
): Promise<{ replayedJobId: string } | { held: HeldClaim[] }> {
  const { config, redis, shards } = c.get('deps');
  const store = { redis, layout: shards, timeoutMs: config.ENQUEUE_TIMEOUT_MS };
  const merchantId = c.get('merchant').id;
  const signature = c.get('bodyBoundSignature');
  // Nothing to claim (a version-1 request without an Idempotency-Key, the common case): no fingerprint.
  if (!signature && request.idempotencyKey === undefined) return { held: [] };
  const fingerprint = requestFingerprint(name, request.fields);
  const held: HeldClaim[] = [];
  try {
    const claims = [
      signature &&
        (() =>
          claimSignatureReplay(store, merchantId, signature, config.SIGNATURE_WINDOW_MS, fingerprint, plannedJobId)),
      request.idempotencyKey !== undefined &&
        (() => claimIdempotencyKey(store, merchantId, request.idempotencyKey as string, fingerprint, plannedJobId)),
    ];
    for (const claimNext of claims) {
      if (!claimNext) continue;
      const claim = await claimNext();
      if (claim.replayedJobId !== undefined) {
        const replayedJobId = claim.replayedJobId;
        await Promise.all(held.map((mine) => mine.complete(replayedJobId).catch(() => {})));
        return { replayedJobId };
      }
      held.push(claim);
    }
  } catch (error) {
    await releaseAll(c, held);
    throw error;
  }
  return { held };
}

async function releaseAll(c: Context<AppEnv>, held: HeldClaim[]): Promise<void> {
  await Promise.all(
    held.map((claim) =>
      claim.release().catch((releaseError: unknown) => {
        c.get('logger').warn({ err: releaseError }, 'idempotency record not released; it expires by itself');
      }),
    ),
  );
}

/** The answers an Idempotency-Key adds to a cancel route. */
export const idempotencyErrorResponses = {
  409: errorResponse(
    'CONFLICT (13): the first request with this Idempotency-Key is still being stored; see Retry-After',
  ),
  422: errorResponse('IDEMPOTENCY_CONFLICT (12): this Idempotency-Key was used with other request fields'),
} as const;
