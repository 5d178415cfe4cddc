import { type Kysely, sql, type Transaction } from 'kysely';
import type { CancellationJobRow, Database, JobState } from '../db/schema.js';

type Executor = Kysely<Database> | Transaction<Database>;

interface JobCounts {
  requested?: number | null;
  cancelled?: number | null;
  alreadyCancelled?: number | null;
  notCancellable?: number | null;
  notFound?: number | null;
  players?: number | null;
}

export interface JobRecord {
  id: string;
  merchantId: string;
  operation: string;
  requestId?: string | null;
  createdAt: Date;
}

/**
 * The durable audit trail of cancellation jobs (docs/design.md §5). Writes are upserts keyed by job id, so
 * a job that runs twice (at-least-once delivery) updates its row rather than adding one.
 * Many records are written in one statement: coalesced single cancels finish hundreds at a time.
 */
export async function recordJobsStarted(db: Executor, jobs: readonly JobRecord[], startedAt: Date): Promise<void> {
  if (jobs.length === 0) return;
  await db
    .insertInto('cancellation_jobs')
    .values(
      jobs.map((job) => ({
        id: job.id,
        merchant_id: job.merchantId,
        operation: job.operation,
        state: 'running' as JobState,
        request_id: job.requestId ?? null,
        created_at: job.createdAt,
        started_at: startedAt,
        attempts: 1,
      })),
    )
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        // A retry of a failed attempt runs again; a finished job stays finished. (An abort recorded as
        // `cancelled` by the API while a worker was already taking the job becomes running again: that
        // worker sees the abort and records the job as cancelled when it stops.)
        state: sql<JobState>`CASE WHEN cancellation_jobs.state = 'completed' THEN cancellation_jobs.state ELSE 'running' END`,
        attempts: sql<number>`cancellation_jobs.attempts + 1`,
        error: sql<null>`CASE WHEN cancellation_jobs.state = 'completed' THEN cancellation_jobs.error ELSE NULL END`,
        started_at: eb.fn.coalesce('cancellation_jobs.started_at', eb.ref('excluded.started_at')),
        updated_at: sql<Date>`now()`,
      })),
    )
    .execute();
}

export interface JobOutcome extends JobRecord {
  state: 'completed' | 'failed' | 'cancelled';
  counts: JobCounts;
  error?: string | null;
  startedAt: Date;
  finishedAt: Date;
}

export async function recordJobsFinished(db: Executor, outcomes: readonly JobOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await db
    .insertInto('cancellation_jobs')
    .values(
      outcomes.map((job) => ({
        id: job.id,
        merchant_id: job.merchantId,
        operation: job.operation,
        state: job.state,
        request_id: job.requestId ?? null,
        requested: job.counts.requested ?? null,
        cancelled: job.counts.cancelled ?? null,
        already_cancelled: job.counts.alreadyCancelled ?? null,
        not_cancellable: job.counts.notCancellable ?? null,
        not_found: job.counts.notFound ?? null,
        players: job.counts.players ?? null,
        error: job.error ?? null,
        created_at: job.createdAt,
        started_at: job.startedAt,
        finished_at: job.finishedAt,
        attempts: 1,
      })),
    )
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        state: eb.ref('excluded.state'),
        requested: eb.ref('excluded.requested'),
        cancelled: eb.ref('excluded.cancelled'),
        already_cancelled: eb.ref('excluded.already_cancelled'),
        not_cancellable: eb.ref('excluded.not_cancellable'),
        not_found: eb.ref('excluded.not_found'),
        players: eb.ref('excluded.players'),
        error: eb.ref('excluded.error'),
        started_at: eb.fn.coalesce('cancellation_jobs.started_at', eb.ref('excluded.started_at')),
        finished_at: eb.ref('excluded.finished_at'),
        updated_at: sql<Date>`now()`,
      })),
    )
    .execute();
}

export async function findJobRecord(db: Executor, jobId: string): Promise<CancellationJobRow | undefined> {
  return db.selectFrom('cancellation_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
}
