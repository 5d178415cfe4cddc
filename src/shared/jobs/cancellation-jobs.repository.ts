import { sql } from 'kysely';
import type { Executor } from '../db/client.js';
import type { CancellationJobRow, JobState } from '../db/schema.js';

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
 * The durable audit trail of cancellation jobs (docs/design.md §5). Writes are upserts keyed by merchant and job id, so
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
      oc.columns(['merchant_id', 'id']).doUpdateSet((eb) => ({
        // A retry of a failed attempt runs again; a finished job stays finished. (An abort recorded as
        // `cancelled` by the API while a worker was already taking the job becomes running again: that
        // worker sees the abort and records the job as cancelled when it stops.)
        state: sql<JobState>`CASE WHEN cancellation_jobs.state = 'completed' THEN cancellation_jobs.state ELSE 'running' END`,
        attempts: sql<number>`cancellation_jobs.attempts + 1`,
        error: sql<null>`CASE WHEN cancellation_jobs.state = 'completed' THEN cancellation_jobs.error ELSE NULL END`,
        started_at: eb.fn.coalesce('cancellation_jobs.started_at', eb.ref('excluded.started_at')),
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

/**
 * How an audit row already there (an earlier attempt, or the API's record of an abort) takes a finished
 * job's outcome; the row is aliased `j`. Shared with the coalesced single-cancel statement, which writes its
 * rows in the same statement as the cancels. A single cancel's reward stays listed (`reward_id`) whatever
 * a later record says, as a bulk job's `job_rewards` rows do.
 */
export const FINISHED_JOB_CONFLICT = `ON CONFLICT (merchant_id, id) DO UPDATE SET
     state = excluded.state,
     outcome = excluded.outcome,
     reward_id = coalesce(excluded.reward_id, j.reward_id),
     requested = excluded.requested,
     cancelled = excluded.cancelled,
     already_cancelled = excluded.already_cancelled,
     not_cancellable = excluded.not_cancellable,
     not_found = excluded.not_found,
     players = excluded.players,
     error = excluded.error,
     started_at = coalesce(j.started_at, excluded.started_at),
     finished_at = excluded.finished_at`;

/**
 * The finished jobs' audit rows, one upsert for all of them. Columns travel as one array each
 * (`unnest`), so the statement has fifteen parameters whatever the number of jobs: coalesced single
 * cancels finish in batches of a few to hundreds of jobs, thousands of times a minute, and a VALUES list
 * of 16 parameters per job had Postgres parse and plan a statement of up to 8,000 parameters every time.
 */
export async function recordJobsFinished(db: Executor, outcomes: readonly JobOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const column = <T>(value: (job: JobOutcome) => T) => outcomes.map(value);
  await sql`
    INSERT INTO cancellation_jobs AS j (
      id, merchant_id, operation, state, request_id, requested, cancelled, already_cancelled,
      not_cancellable, not_found, players, error, created_at, started_at, finished_at, attempts
    )
    SELECT t.*, 1 FROM unnest(
      ${column((job) => job.id)}::uuid[],
      ${column((job) => job.merchantId)}::uuid[],
      ${column((job) => job.operation)}::job_operation[],
      ${column((job) => job.state)}::job_state[],
      ${column((job) => job.requestId ?? null)}::text[],
      ${column((job) => job.counts.requested ?? null)}::int[],
      ${column((job) => job.counts.cancelled ?? null)}::int[],
      ${column((job) => job.counts.alreadyCancelled ?? null)}::int[],
      ${column((job) => job.counts.notCancellable ?? null)}::int[],
      ${column((job) => job.counts.notFound ?? null)}::int[],
      ${column((job) => job.counts.players ?? null)}::int[],
      ${column((job) => job.error ?? null)}::text[],
      ${column((job) => job.createdAt)}::timestamptz[],
      ${column((job) => job.startedAt)}::timestamptz[],
      ${column((job) => job.finishedAt)}::timestamptz[]
    ) AS t
    ${sql.raw(FINISHED_JOB_CONFLICT)}
  `.execute(db);
}

/** Which of these jobs of one merchant have an audit row in one of these states. */
async function jobIdsInStates(
  db: Executor,
  merchantId: string,
  jobIds: readonly string[],
  states: readonly JobState[],
): Promise<Set<string>> {
  if (jobIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('cancellation_jobs')
    .select('id')
    .where('merchant_id', '=', merchantId)
    .where('id', 'in', jobIds)
    .where('state', 'in', states)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** Which of these jobs of one merchant already have a finished audit row (completed, failed or cancelled). */
export const finishedJobIds = (db: Executor, merchantId: string, jobIds: readonly string[]) =>
  jobIdsInStates(db, merchantId, jobIds, ['completed', 'failed', 'cancelled']);

/**
 * Which of these jobs have an audit row `cancelled`: for a single-cancel batch taken after its members'
 * withdrawn marks expired, the members the API withdrew (it writes that row before withdrawing).
 */
export const cancelledJobIds = (db: Executor, merchantId: string, jobIds: readonly string[]) =>
  jobIdsInStates(db, merchantId, jobIds, ['cancelled']);

/**
 * A job's audit row, found by its key: the merchant's id and the job's. Without the merchant (the admin
 * API only) the job is looked up by its id alone, which the key cannot serve: a scan of the table.
 */
export async function findJobRecord(
  db: Executor,
  merchantId: string | null | undefined,
  jobId: string,
): Promise<CancellationJobRow | undefined> {
  let query = db.selectFrom('cancellation_jobs').selectAll().where('id', '=', jobId);
  if (merchantId != null) query = query.where('merchant_id', '=', merchantId);
  return query.executeTakeFirst();
}
