import { sql } from 'kysely';
import type { Db } from '../../src/shared/db/client.js';
import type { JobStatusBody } from './cancellation.js';
import { describeAnswer, signedPost } from './merchant-http.js';
import type { MerchantCredentials } from './signing.js';
import { eventually } from './worker.js';

/**
 * What every fault test checks at the end, straight from the database and the job status route:
 * each job a 200 promised has run, its counts are what the rewards show, and the rewards it named
 * are CANCELLED under its id.
 */

/** Polls the signed status route until the job has finished; a failed job ends the wait with an error. */
export async function waitForCompletedJob(
  baseUrl: string,
  merchant: MerchantCredentials,
  jobId: string,
  timeoutMs = 60_000,
): Promise<JobStatusBody> {
  let last = '(no answer yet)';
  return eventually(
    async () => {
      const answer = await signedPost(baseUrl, merchant, 'jobStatus', { jobId });
      last = describeAnswer(answer);
      if (answer.status !== 200) return undefined;
      const status = JSON.parse(answer.body) as JobStatusBody;
      if (status.state === 'failed') throw new Error(`job ${jobId} failed: ${last}`);
      return status.state === 'completed' ? status : undefined;
    },
    { timeoutMs, intervalMs: 200, what: `job ${jobId} to complete` },
  ).catch((error: Error) => {
    throw new Error(`${error.message}; its status last answered: ${last}`);
  });
}

/** Rewards that carry this job id as their canceller. */
export async function cancelledByJob(db: Db, jobId: string): Promise<number> {
  const result = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM rewards WHERE cancellation_job_id = ${jobId}::uuid
  `.execute(db);
  return result.rows[0]?.n ?? 0;
}

/** Rewards cancelled per job id, for many jobs in one query. */
export async function cancelledByJobs(db: Db, jobIds: readonly string[]): Promise<Map<string, number>> {
  const result = await sql<{ job: string; n: number }>`
    SELECT cancellation_job_id::text AS job, count(*)::int AS n FROM rewards
    WHERE cancellation_job_id = ANY(${jobIds}::uuid[]) GROUP BY 1
  `.execute(db);
  return new Map(result.rows.map((row) => [row.job, row.n]));
}

export interface RewardState {
  status: string;
  jobId: string | null;
}

export async function rewardStates(db: Db, rewardIds: readonly string[]): Promise<Map<string, RewardState>> {
  const result = await sql<{ id: string; status: string; job: string | null }>`
    SELECT id::text, status, cancellation_job_id::text AS job FROM rewards WHERE id = ANY(${rewardIds}::uuid[])
  `.execute(db);
  return new Map(result.rows.map((row) => [row.id, { status: row.status, jobId: row.job }]));
}

/**
 * Rewards a 200 promised to cancel that are not CANCELLED under the job the merchant was given:
 * an empty list is the promise kept.
 */
export async function brokenPromises(
  db: Db,
  promised: ReadonlyArray<{ rewardId: string; jobId: string }>,
): Promise<string[]> {
  const states = await rewardStates(
    db,
    promised.map((p) => p.rewardId),
  );
  return promised
    .filter(({ rewardId, jobId }) => {
      const state = states.get(rewardId);
      return state?.status !== 'CANCELLED' || state.jobId !== jobId;
    })
    .map(({ rewardId, jobId }) => `${rewardId} (job ${jobId}): ${JSON.stringify(states.get(rewardId) ?? null)}`);
}

/** Backends of this database that wait on a lock, by application name (the service processes name theirs). */
export async function backendsWaitingOnLocks(db: Db, applicationName: string): Promise<number> {
  const result = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = ${applicationName} AND wait_event_type = 'Lock'
  `.execute(db);
  return result.rows[0]?.n ?? 0;
}
