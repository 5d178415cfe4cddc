import type { Context } from 'hono';
import type { Operation } from '../../shared/db/schema.js';
import { runInContext } from '../../shared/telemetry/trace-context.js';
import type { AppEnv } from '../context.js';
import { errorResponse } from '../http/schemas.js';
import { isJobStored } from '../jobs/stored-job.js';
import { type AcceptedOk, accepted } from './cancel-answer.js';
import { claimIdempotencyKey, claimSignatureReplay, type HeldRecord, requestFingerprint } from './idempotency.js';
import { isStoreOutcomeUnknown, type OperationPayload } from './producer.js';

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
  const claims = await claimRecords(
    c,
    name,
    request,
    name === 'cancel' ? undefined : shards.newJobId(c.get('merchant').id),
  );
  if ('replayedJobId' in claims) {
    c.header('Idempotent-Replayed', 'true');
    return accepted(c, claims.replayedJobId);
  }
  // A retry of a store whose outcome is unknown (jobs/stored-job.ts): the job stored under its id is
  // answered as a replay; else this request stores it under that id now, below.
  const { plannedJobId } = claims;
  if (claims.unsettled && plannedJobId !== undefined && (await isJobStored(c, name, plannedJobId))) {
    await completeAll(c, claims.held, plannedJobId);
    c.header('Idempotent-Replayed', 'true');
    return accepted(c, plannedJobId);
  }
  if (claims.unsettled)
    c.get('logger').info({ jobId: plannedJobId }, 'earlier store of this job not found: storing it');

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
    // finds it there or stores it under that id, and never queues a second job. Certainly not stored:
    // the records are freed (but those naming an earlier unsettled store's id), so the merchant's retry
    // is not refused as in flight.
    if (plannedJobId === undefined || !isStoreOutcomeUnknown(error)) await releaseAll(c, claims.held);
    throw error;
  }
  // The job is stored and will run: the answer is 200 even if a record cannot be written (a planned
  // id's pending record leads a retry to the job stored under it; a single cancel's expires within 30 s,
  // after which a repeat could queue a second single cancel, which changes nothing more). Logged.
  await completeAll(c, claims.held, jobId);
  return accepted(c, jobId);
}

async function completeAll(c: Context<AppEnv>, held: HeldRecord[], jobId: string): Promise<void> {
  await Promise.all(
    held.map((claim) =>
      claim.complete(jobId).catch((recordError: unknown) => {
        c.get('logger').warn({ err: recordError, jobId }, 'idempotency record not written');
      }),
    ),
  );
}

/** The records a request holds, and the job id it stores its job under. */
interface HeldRecords {
  held: HeldRecord[];
  plannedJobId: string | undefined;
  /** A record named the id of an earlier store whose outcome is unknown: plannedJobId is that id. */
  unsettled: boolean;
}

/**
 * The records this request is answered from when it is sent again: its X-Signature's (version 2) and
 * its Idempotency-Key's. Either one naming a job makes the request a replay of that job (the other
 * record, if held, is completed with it). One naming an unsettled store's id makes that id this
 * request's planned id, and the records already held name it too: every record of the request leads
 * to the one job.
 */
async function claimRecords(
  c: Context<AppEnv>,
  name: Operation,
  request: CancelRequest,
  freshJobId: string | undefined,
): Promise<{ replayedJobId: string } | HeldRecords> {
  const { config, redis, shards } = c.get('deps');
  const store = {
    redis,
    layout: shards,
    timeoutMs: config.ENQUEUE_TIMEOUT_MS,
    recordsPerMerchant: {
      idempotencyKeys: config.IDEMPOTENCY_RECORDS_PER_MERCHANT,
      signatureReplays: config.SIGNATURE_REPLAY_RECORDS_PER_MERCHANT,
    },
  };
  const merchantId = c.get('merchant').id;
  const signature = c.get('bodyBoundSignature');
  let plannedJobId = freshJobId;
  let unsettled = false;
  // Nothing to claim (a version-1 request without an Idempotency-Key, the common case): no fingerprint.
  if (!signature && request.idempotencyKey === undefined) return { held: [], plannedJobId, unsettled };
  const fingerprint = requestFingerprint(name, request.fields);
  const held: HeldRecord[] = [];
  try {
    const claims = [
      signature &&
        ((planned: string | undefined) =>
          claimSignatureReplay(store, merchantId, signature, config.SIGNATURE_WINDOW_MS, fingerprint, planned)),
      request.idempotencyKey !== undefined &&
        ((planned: string | undefined) =>
          claimIdempotencyKey(store, merchantId, request.idempotencyKey as string, fingerprint, planned)),
    ];
    for (const claimNext of claims) {
      if (!claimNext) continue;
      const claim = await claimNext(plannedJobId);
      if (claim.replayedJobId !== undefined) {
        const replayedJobId = claim.replayedJobId;
        await Promise.all(held.map((mine) => mine.complete(replayedJobId).catch(() => {})));
        return { replayedJobId };
      }
      held.push(claim);
      const inherited = claim.unsettledJobId;
      if (inherited === undefined || unsettled) continue;
      // Records held before name this request's fresh id, which no store has used: they now name the
      // unsettled one. (Two unsettled ids in one request's records, each from its own timed-out first
      // request with the same fields, cannot both be settled: the first one found is.)
      for (const mine of held) if (mine !== claim) await mine.adopt(inherited);
      plannedJobId = inherited;
      unsettled = true;
    }
  } catch (error) {
    await releaseAll(c, held);
    throw error;
  }
  return { held, plannedJobId, unsettled };
}

async function releaseAll(c: Context<AppEnv>, held: HeldRecord[]): Promise<void> {
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
