import type { Job } from 'bullmq';
import type { Db } from '../db/client.js';
import type { JobStatus, PublicJobStatus } from '../job-status-schema.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { decideEnd, isAbortRequested } from '../queue/job-abort.js';
import {
  type CancelResult,
  cancelBatchJobSchema,
  type JobName,
  type JobPayload,
  jobCatalogue,
  type Operation,
  queueNames,
} from '../queue/job-catalogue.js';
import type { MerchantTurns } from '../queue/merchant-turns.js';
import type { RedisConnection } from '../queue/redis.js';
import type { ShardLayout } from '../queue/shards.js';
import {
  type JobOutcome as AuditRow,
  finishedJobIds,
  recordJobsFinished,
  recordJobsStarted,
} from '../repositories/cancellation-jobs.repository.js';
import type { WebhookNotifier } from '../webhooks/webhook-notifier.js';
import { toPublicStatus } from './public-status.js';

/**
 * The one owner of a job's life: where it starts (its audit row, its turn) and where it ends (its audit
 * row, the duration metric, the log line, the webhook event, the merchant's turn and the dropping of its
 * identifiers). The worker's dispatch (workers.ts) and its processors call it for BullMQ jobs, the
 * single-cancel batch processor for each single cancel in a batch, and the API's abort route for a job it
 * takes out of its queue before any worker saw it.
 *
 * A job's end comes in up to two steps, both here:
 * - `finished`, awaited before the processor's answer goes back to BullMQ: the audit row of a merchant's
 *   bulk job (so the row says `completed` before Redis does), and a final failure.
 * - `afterCompletion`, once BullMQ has marked the job completed (its 'completed' event: BullMQ has no later
 *   place a worker can await). What it does must come after that mark: the webhook event (a merchant that
 *   asks for the status on the event must find the job completed, and its `finishedAt` is BullMQ's
 *   `finishedOn`, the time the status route answers), the metric and log line decided and timed with it,
 *   the merchant's turn (the job keeps its place under the cap until BullMQ can no longer run it) and its
 *   identifiers (a job that has not completed may run again and needs them).
 */

/** Where final outcomes go when Postgres may be away: the worker's audit outbox keeps them in Redis. */
interface AuditRecorder {
  record(rows: readonly AuditRow[]): Promise<void>;
}

/** What the owner uses in a worker process (the worker's deps have it all). */
export interface JobOutcomeDeps {
  shards: ShardLayout;
  db: Db;
  redis: RedisConnection;
  logger: Logger;
  metrics: Metrics;
  turns: MerchantTurns;
  outbox: AuditRecorder;
  webhooks: WebhookNotifier;
}

type JobData = { merchantId?: string; requestId?: string; rootJobId?: string; operation?: string };
type FinishedState = 'completed' | 'failed' | 'cancelled';
type Counts = Record<string, number>;

/** A job of the merchant's own (not a part of a split job, nor a batch of single cancels). */
function isMerchantJob(job: Job): boolean {
  return job.name !== 'bulkCancelPart' && job.name !== 'cancelBatch';
}

function abortRequested(deps: Pick<JobOutcomeDeps, 'redis' | 'shards'>, jobId: string): Promise<boolean> {
  return isAbortRequested(deps.redis, deps.shards, jobId);
}

/** A bulk item (a merchant's job or a part) was taken by a worker: it no longer waits for its turn. */
export async function taken(deps: Pick<JobOutcomeDeps, 'turns'>, job: Job): Promise<void> {
  const merchantId = (job.data as JobData).merchantId;
  if (job.queueName === queueNames.bulk && merchantId) await deps.turns.started(merchantId, job.id as string);
}

/**
 * Marks a merchant's bulk job as running (audit row) and lets identical requests that arrive from
 * now on get a job of their own: the deduplication key only joins requests while a job still waits.
 * A running query job may already have passed a player whose reward is assigned after it started.
 */
export async function started(deps: Pick<JobOutcomeDeps, 'db'>, job: Job, merchantId: string, requestId?: string) {
  await Promise.all([
    recordJobsStarted(
      deps.db,
      [{ id: job.id as string, merchantId, operation: job.name, requestId, createdAt: new Date(job.timestamp) }],
      new Date(job.processedOn ?? Date.now()),
    ),
    job.deduplicationId ? job.removeDeduplicationKey() : Promise.resolve(false),
  ]);
}

/**
 * A BullMQ job's end as its worker sees it, awaited before BullMQ hears of it:
 * - `completed` (the processor returned its counts): a merchant's bulk job records its outcome,
 *   `cancelled` when the merchant aborted it, else `completed`. The rest follows in `afterCompletion`.
 * - `failed` (its last attempt failed; from BullMQ's 'failed' event, see `attemptFailed`): the metric,
 *   the audit row through the outbox (an outage cannot lose it), the turn, the identifiers, the webhook.
 */
export async function finished(deps: JobOutcomeDeps, job: Job, state: 'completed', counts: Counts): Promise<void>;
export async function finished(deps: JobOutcomeDeps, job: Job, state: 'failed', error: Error): Promise<void>;
export async function finished(
  deps: JobOutcomeDeps,
  job: Job,
  state: 'completed' | 'failed',
  outcome: Counts | Error,
): Promise<void> {
  if (state === 'failed') return failedForGood(deps, job, outcome as Error);
  const { merchantId, requestId } = job.data as JobData;
  if (job.queueName !== queueNames.bulk || !isMerchantJob(job) || !merchantId) return;
  // Decided here, once: from now on the abort route refuses this job, and every later reader of the
  // mark (the announcement below, the job status) reads this outcome.
  const ended = await decideEnd(deps.redis, deps.shards, job.id as string);
  await recordJobsFinished(deps.db, [
    {
      id: job.id as string,
      merchantId,
      operation: job.name,
      requestId,
      createdAt: new Date(job.timestamp),
      startedAt: new Date(job.processedOn ?? Date.now()),
      finishedAt: new Date(),
      state: ended,
      counts: { ...(outcome as Counts) },
    },
  ]);
}

/** One log line, the metric, the webhook event and the merchant's bookkeeping, once BullMQ marked it completed. */
export async function afterCompletion(deps: JobOutcomeDeps, job: Job, result: unknown): Promise<void> {
  const ms = (job.finishedOn ?? Date.now()) - (job.processedOn ?? job.timestamp);
  const bulk = job.queueName === queueNames.bulk;
  // A merchant's bulk job is counted once it is known whether it ran to the end or was aborted.
  if (!bulk || !isMerchantJob(job)) {
    deps.metrics.jobDuration.observe({ operation: job.name, outcome: 'completed' }, ms / 1000);
  }
  const data = job.data as JobData;
  deps.logger[isMerchantJob(job) ? 'info' : 'debug'](
    {
      jobId: job.id,
      merchantId: data.merchantId,
      requestId: data.requestId,
      operation: job.name,
      counts: result,
      ms,
    },
    'job completed',
  );
  const steps: Promise<unknown>[] = [];
  if (isMerchantJob(job) && data.merchantId) steps.push(announceCompleted(deps, job, data.merchantId, result));
  // A batch of single cancels drops its requests (each one's outcome is in its own audit row).
  if (job.name === 'cancelBatch') steps.push(forgetIdentifiers(job));
  if (bulk) {
    if (data.merchantId) steps.push(deps.turns.finished(data.merchantId, job.id as string).catch(() => {}));
    steps.push(forgetIdentifiers(job));
  }
  await Promise.all(steps);
}

/** Tells the merchant's webhook that a job of theirs completed, or stopped after an abort. */
async function announceCompleted(deps: JobOutcomeDeps, job: Job, merchantId: string, result: unknown) {
  const bulk = job.queueName === queueNames.bulk;
  // The outcome `finished` decided: the mark cannot change after it (job-abort.ts).
  const aborted = bulk && (await abortRequested(deps, job.id as string).catch(() => false));
  if (bulk) {
    const seconds = ((job.finishedOn ?? Date.now()) - (job.processedOn ?? job.timestamp)) / 1000;
    deps.metrics.jobDuration.observe({ operation: job.name, outcome: aborted ? 'cancelled' : 'completed' }, seconds);
  }
  const state = aborted ? 'cancelled' : 'completed';
  await deps.webhooks.jobFinished({
    merchantId,
    type: aborted ? 'job.cancelled' : 'job.completed',
    status: toPublicStatus(statusOfJob(job, merchantId, state, result as Counts, null)),
  });
}

/**
 * A failed attempt (BullMQ's 'failed' event): logged, and when it was the last one, the job's end.
 * BullMQ decides inside Redis whether an attempt was the last (attempts left, backoff, an unrecoverable
 * error, a job stalled too often), and this event is the only place a worker learns it.
 */
export async function attemptFailed(deps: JobOutcomeDeps, job: Job, error: Error): Promise<void> {
  const data = job.data as JobData;
  const final = (await job.getState().catch(() => 'unknown')) === 'failed';
  deps.logger[final ? 'error' : 'warn'](
    {
      jobId: job.id,
      merchantId: data.merchantId,
      requestId: data.requestId,
      operation: job.name,
      attempt: job.attemptsMade,
      final,
      err: error,
      ms: Date.now() - (job.processedOn ?? job.timestamp),
    },
    final ? 'job failed' : 'job attempt failed; will retry',
  );
  if (final) await finished(deps, job, 'failed', error);
}

async function failedForGood(deps: JobOutcomeDeps, job: Job, error: Error): Promise<void> {
  const data = job.data as JobData;
  const ms = Date.now() - (job.processedOn ?? job.timestamp);
  deps.metrics.jobDuration.observe({ operation: job.name, outcome: 'failed' }, ms / 1000);
  if (job.name === 'cancelBatch') return batchFailed(deps, job, error);
  if (!data.merchantId) return;
  // A part that fails for good fails its parent inside Redis (failParentOnFailure), where no worker
  // sees it happen: the part records the merchant's job as failed in the audit table itself.
  const isPart = !isMerchantJob(job);
  if (isPart && !data.rootJobId) return;
  const merchantJobId = isPart ? (data.rootJobId as string) : (job.id as string);
  await deps.outbox
    .record([
      {
        id: merchantJobId,
        merchantId: data.merchantId,
        operation: isPart ? (data.operation ?? job.name) : (jobCatalogue[job.name as JobName]?.operation ?? job.name),
        requestId: data.requestId,
        createdAt: new Date(job.timestamp),
        startedAt: new Date(job.processedOn ?? job.timestamp),
        finishedAt: new Date(job.finishedOn ?? Date.now()),
        state: 'failed',
        counts: {},
        error: isPart ? `part ${job.id} failed: ${error.message}` : error.message,
      },
    ])
    .catch((writeError: unknown) =>
      deps.logger.error({ err: writeError, jobId: job.id }, 'could not record job failure'),
    );
  await deps.turns.finished(data.merchantId, merchantJobId).catch(() => {});
  await forgetIdentifiers(job);
  await deps.webhooks.jobFinished({
    merchantId: data.merchantId,
    type: 'job.failed',
    status: toPublicStatus(
      isPart
        ? statusOfJob(job, data.merchantId, 'failed', null, error.message, {
            jobId: merchantJobId,
            operation: partOperation(data.operation),
          })
        : statusOfJob(job, data.merchantId, 'failed', null, error.message),
    ),
  });
}

/**
 * A batch of single cancels that failed for good (it could not even be read, or every attempt hit an
 * error of the batch's own): every request in it that has not finished otherwise (committed by an
 * earlier attempt, or aborted) is a job of the merchant's that failed.
 */
async function batchFailed(deps: JobOutcomeDeps, job: Job, error: Error): Promise<void> {
  const parsed = cancelBatchJobSchema.safeParse(job.data);
  if (!parsed.success) return;
  const { merchantId } = parsed.data;
  // Postgres away: all are recorded failed through the outbox (a finished row cannot be told apart then).
  const finishedIds = await finishedJobIds(
    deps.db,
    merchantId,
    parsed.data.requests.map((request) => request.jobId),
  ).catch(() => new Set<string>());
  const requests = parsed.data.requests.filter((request) => !finishedIds.has(request.jobId));
  const times = {
    createdAt: new Date(job.timestamp),
    startedAt: new Date(job.processedOn ?? job.timestamp),
    finishedAt: new Date(job.finishedOn ?? Date.now()),
  };
  await deps.outbox
    .record(
      requests.map((request) => ({
        id: request.jobId,
        merchantId,
        operation: 'cancel',
        requestId: request.requestId,
        ...times,
        state: 'failed' as const,
        counts: {},
        error: `batch ${job.id} failed: ${error.message}`,
      })),
    )
    .catch((writeError: unknown) =>
      deps.logger.error({ err: writeError, jobId: job.id }, 'could not record job failure'),
    );
  for (const request of requests) {
    await deps.webhooks.jobFinished({
      merchantId,
      type: 'job.failed',
      status: toPublicStatus(
        statusOfJob(job, merchantId, 'failed', null, error.message, { jobId: request.jobId, operation: 'cancel' }),
      ),
    });
  }
  await forgetIdentifiers(job);
}

function partOperation(operation: string | undefined): Operation {
  return operation === 'bulkCancel' ? 'bulkCancel' : 'bulkCancelByQuery';
}

/**
 * A finished job's status from the job in hand (no Redis read): for the webhook event, sent as the job
 * finishes. `as` names the merchant's job when the job in hand carried part of it (a part, a batch).
 */
function statusOfJob(
  job: Job,
  merchantId: string,
  state: FinishedState,
  result: Counts | null,
  error: string | null,
  as?: { jobId: string; operation: Operation },
): JobStatus {
  return {
    jobId: as?.jobId ?? (job.id as string),
    merchantId,
    operation: as?.operation ?? ((jobCatalogue[job.name as JobName]?.operation ?? 'bulkCancel') as Operation),
    state,
    createdAt: job.timestamp,
    startedAt: job.processedOn ?? null,
    finishedAt: job.finishedOn ?? Date.now(),
    progress: state === 'completed' ? 100 : typeof job.progress === 'number' ? job.progress : 0,
    result: state === 'failed' ? null : result,
    error: state === 'failed' ? error : null,
  };
}

type BatchMember = Pick<JobPayload<'cancelBatch'>['requests'][number], 'jobId' | 'requestId'>;

/** How one single cancel of a batch ended. */
export type MemberEnd =
  | { member: BatchMember; state: 'completed'; counts: CancelResult }
  | { member: BatchMember; state: 'failed'; error: Error }
  | { member: BatchMember; state: 'cancelled' };

/**
 * The ends of single cancels run in one batch, each a job of the merchant's own: logged, counted and
 * announced to the merchant's webhook on its own. A completed one's audit row was committed with its
 * reward (single-cancel-coalescer.ts); the failed and aborted ones are recorded here through the outbox,
 * in one write. The batch's own end is its BullMQ job's (`finished`, `afterCompletion`).
 */
export async function membersFinished(
  deps: JobOutcomeDeps,
  batch: { merchantId: string; createdAt: Date; startedAt: Date; finishedAt: number },
  ends: readonly MemberEnd[],
): Promise<void> {
  const { merchantId, createdAt, startedAt, finishedAt } = batch;
  const seconds = (finishedAt - startedAt.getTime()) / 1000;
  const statusOf = (member: BatchMember, state: FinishedState, result: CancelResult | null, error: string | null) =>
    toPublicStatus({
      jobId: member.jobId,
      merchantId,
      operation: 'cancel',
      state,
      createdAt: createdAt.getTime(),
      startedAt: startedAt.getTime(),
      finishedAt,
      progress: state === 'failed' ? 0 : 100,
      result: result ? { ...result } : null,
      error,
    });
  const announced: Promise<void>[] = [];
  try {
    for (const end of ends) {
      if (end.state !== 'completed') continue;
      const { member, counts } = end;
      deps.metrics.jobDuration.observe({ operation: 'cancel', outcome: 'completed' }, seconds);
      deps.logger.info(
        {
          jobId: member.jobId,
          merchantId,
          requestId: member.requestId,
          operation: 'cancel',
          counts,
          ms: seconds * 1000,
        },
        'job completed',
      );
      announced.push(
        deps.webhooks.jobFinished({
          merchantId,
          type: 'job.completed',
          status: statusOf(member, 'completed', counts, null),
        }),
      );
    }

    const failures = ends.filter((end) => end.state === 'failed');
    const aborted = ends.filter((end) => end.state === 'cancelled');
    const recorded = [
      ...failures.map(({ member, error }) => ({ member, state: 'failed' as const, error: error.message })),
      ...aborted.map(({ member }) => ({ member, state: 'cancelled' as const, error: undefined })),
    ];
    if (recorded.length > 0) {
      await deps.outbox.record(
        recorded.map(({ member, state, error }) => ({
          id: member.jobId,
          merchantId,
          operation: 'cancel',
          requestId: member.requestId,
          createdAt,
          startedAt,
          finishedAt: new Date(finishedAt),
          state,
          counts: {},
          error,
        })),
      );
    }
    for (const { member, error } of failures) {
      deps.metrics.jobDuration.observe({ operation: 'cancel', outcome: 'failed' }, seconds);
      deps.logger.error(
        { jobId: member.jobId, merchantId, requestId: member.requestId, operation: 'cancel', err: error },
        'job failed',
      );
      announced.push(
        deps.webhooks.jobFinished({
          merchantId,
          type: 'job.failed',
          status: statusOf(member, 'failed', null, error.message),
        }),
      );
    }
    for (const { member } of aborted) {
      deps.metrics.jobDuration.observe({ operation: 'cancel', outcome: 'cancelled' }, seconds);
      deps.logger.info(
        { jobId: member.jobId, merchantId, requestId: member.requestId, operation: 'cancel' },
        'job aborted',
      );
      announced.push(
        deps.webhooks.jobFinished({
          merchantId,
          type: 'job.cancelled',
          status: statusOf(member, 'cancelled', null, null),
        }),
      );
    }
  } finally {
    // Queued side by side; never throws (a webhook failure is logged by the notifier).
    await Promise.all(announced);
  }
}

/**
 * A queued job the merchant aborted, taken out of its queue by the API before any worker saw it: its
 * audit row first (once the job has left Redis, the row is its only record), then `remove`. True when
 * the removal took it: the job is finished here, and `withdrawnAnnounced` tells its webhook (a job a
 * worker took meanwhile is told by that worker as it stops).
 */
export async function withdraw(
  deps: Pick<JobOutcomeDeps, 'db'>,
  job: Pick<JobStatus, 'jobId' | 'merchantId' | 'operation' | 'createdAt'>,
  remove: () => Promise<boolean>,
): Promise<boolean> {
  const now = new Date();
  await recordJobsFinished(deps.db, [
    {
      id: job.jobId,
      merchantId: job.merchantId,
      operation: job.operation,
      createdAt: new Date(job.createdAt),
      startedAt: now,
      finishedAt: now,
      state: 'cancelled',
      counts: {},
    },
  ]);
  return remove();
}

/** The webhook event of a job `withdraw` took out of its queue, with the status the API answered. */
export async function withdrawnAnnounced(
  deps: Pick<JobOutcomeDeps, 'webhooks'>,
  merchantId: string,
  status: PublicJobStatus,
): Promise<void> {
  await deps.webhooks.jobFinished({ merchantId, type: 'job.cancelled', status });
}

/**
 * A finished job keeps nothing in Redis that grows with its size: its identifiers (up to 10,000 ids,
 * or a part's slice) are dropped from its data, which keeps only who asked, the split marker and the
 * last checkpoint (a few numbers). Its counts live on in its return value and in Postgres. (Such a job
 * cannot be run again from the dashboard: the identifiers are gone; the merchant sends the request again.)
 */
async function forgetIdentifiers(job: Job): Promise<void> {
  const { merchantId, requestId, acceptedAt, rootJobId, operation, step, cursor } = job.data as Record<string, unknown>;
  await job.updateData({ merchantId, requestId, acceptedAt, rootJobId, operation, step, cursor }).catch(() => {
    // Already removed (retention), or Redis away: nothing more to free.
  });
}
