import { type Kysely, sql, type Transaction } from 'kysely';
import { configurationCondition, type QueryFilter } from '../../shared/cancellations/query-filter.js';
import type { Executor } from '../../shared/db/client.js';
import { isLockTimeout } from '../../shared/db/database-errors.js';
import type { Database } from '../../shared/db/schema.js';
import { listCancelledRewardsOfJob } from '../../shared/jobs/job-rewards.repository.js';
import { lockThenCancel } from './lock-then-cancel.js';

/** Cancels by players (bulkCancelByQuery), under the lock order of reward-cancellations.repository.ts. */
export interface QueryBatchResult {
  /** ACTIVE rewards the batch selected (at most `limit`): fewer than the limit means the slice is done. */
  picked: number;
  cancelled: number;
}

export interface SliceResult {
  /**
   * Rewards of the slice's players in any state, counted up to `limit + 1`: an upper bound of the
   * ACTIVE ones, used to size the next slices.
   */
  rewards: number;
  /** False when the slice holds more than `limit` rewards: nothing was changed, cancel it in batches. */
  applied: boolean;
  cancelled: number;
}

/**
 * A whole slice of a bulkCancelByQuery in one statement, when its players hold at most `limit`
 * rewards (so the transaction stays within one batch); otherwise nothing changes and the caller
 * cancels the slice in batches (cancelRewardsOfPlayers).
 *
 * The bound is checked in the same statement by counting the slice's rewards in any state from the
 * player index alone (an index-only scan stopped at `limit + 1`), instead of picking the ACTIVE ones
 * first and updating them by address; one statement, one snapshot, so no reward added meanwhile can
 * slip past the count.
 *
 * What it changed is listed later: the statement notes one `job_cancel_slices` row (the job, the
 * players, its `now()`), which a reader of the job's rewards expands (job-rewards.repository.ts). The
 * rewards it changed are exactly the players' rewards carrying the job id and that `cancelled_at`, so
 * the note is exact whichever run of the job wrote it; a statement that changed nothing notes nothing.
 * Chosen by measurement (1,000,000 rewards over two connections, 2026-11-22; bench/README.md): faster
 * than listing every reward inline or the picking batch.
 *
 * Locking: the one exception to the id order (see the top of this file). Runs on the pool, never inside
 * a transaction of the caller's (its fallback needs the failed statement's transaction gone).
 */
export async function cancelSliceOfPlayers(db: Kysely<Database>, params: SliceParams): Promise<SliceResult> {
  try {
    return await cancelSlice(db, params, 'briefWait');
  } catch (error) {
    // A lock held longer than the brief wait (another job on some of these rewards): nothing changed
    // (the statement is its own transaction), so the slice runs again, locking in id order.
    if (!isLockTimeout(error)) throw error;
    return cancelSlice(db, params, 'idOrder');
  }
}

type SliceParams = {
  jobId: string;
  merchantId: string;
  playerIds: readonly string[];
  filter: QueryFilter;
  limit: number;
};

/**
 * How long the slice statement's fast form may wait for a row lock: well under Postgres' default
 * `deadlock_timeout` (1 s), so a circle it is part of ends in this lock timeout, never in a deadlock
 * (an operator who lowers `deadlock_timeout` keeps it above this). Long enough for a batch in flight on
 * the same rewards to commit (a statement of a batch takes tens of milliseconds).
 */
const BRIEF_LOCK_WAIT = '100ms';

async function cancelSlice(db: Kysely<Database>, params: SliceParams, form: 'briefWait' | 'idOrder') {
  const { jobId, merchantId, playerIds, filter, limit } = params;
  const fits = sql`(SELECT rewards FROM counted) <= ${limit}`;
  const slice = sql`r.merchant_id = ${merchantId}
        AND r.player_id = ANY(${playerIds}::text[])
        AND r.status = 'ACTIVE'
        ${configurationCondition(merchantId, filter)}`;
  // The fast form updates in its scan's order, with the lock wait bounded for this statement only
  // (set while the guard is counted, before any row is touched; `true`: until the statement's end).
  // The id-order form locks the slice's rewards in id order first, then updates exactly those.
  const change =
    form === 'briefWait'
      ? sql`updated AS (
      UPDATE rewards r
      SET status = 'CANCELLED', cancelled_at = now(), cancellation_job_id = ${jobId}
      WHERE ${slice}
        AND ${fits}
      RETURNING r.id
    )`
      : lockThenCancel({ jobId, merchantId, rows: sql`${slice} AND ${fits}` });
  const bounded = form === 'briefWait' ? sql`, set_config('lock_timeout', ${BRIEF_LOCK_WAIT}, true)` : sql``;
  const result = await sql<SliceResult>`
    WITH counted AS MATERIALIZED (
      SELECT count(*)::int AS rewards ${bounded} FROM (
        SELECT 1 FROM rewards r
        WHERE r.merchant_id = ${merchantId} AND r.player_id = ANY(${playerIds}::text[])
        LIMIT ${limit + 1}
      ) slice
    ),
    ${change},
    noted AS (
      INSERT INTO job_cancel_slices (job_id, merchant_id, cancelled_at, player_ids)
      SELECT ${jobId}::uuid, ${merchantId}::uuid, now(), ${playerIds}::text[]
      WHERE EXISTS (SELECT 1 FROM updated)
    )
    SELECT (SELECT rewards FROM counted) AS rewards,
      (SELECT rewards FROM counted) <= ${limit} AS applied,
      (SELECT count(*) FROM updated)::int AS cancelled
  `.execute(db);
  return result.rows[0] ?? { rewards: 0, applied: true, cancelled: 0 };
}

/**
 * One batch of a bulkCancelByQuery: up to `limit` ACTIVE rewards of a slice of players. The slice is
 * small (sized to about one batch), so the player array sent with each statement stays short.
 *
 * The rows are picked through the player index, locked in id order and updated by their physical
 * address in the same statement (lock-then-cancel.ts), so each row costs one index descent instead of
 * two (a primary-key probe per id was slower on 1,000,000 rewards, measured 2026-11-20).
 */
export async function cancelRewardsOfPlayers(
  db: Transaction<Database>,
  params: { jobId: string; merchantId: string; playerIds: readonly string[]; filter: QueryFilter; limit: number },
): Promise<QueryBatchResult> {
  const { jobId, merchantId, playerIds, filter, limit } = params;
  const result = await sql<QueryBatchResult>`
    WITH ${lockThenCancel({
      jobId,
      merchantId,
      rows: sql`r.merchant_id = ${merchantId}
        AND r.player_id = ANY(${playerIds}::text[])
        AND r.status = 'ACTIVE'
        ${configurationCondition(merchantId, filter)}`,
      limit,
    })},
    ${listCancelledRewardsOfJob(merchantId, jobId)}
    SELECT (SELECT count(*) FROM locked)::int AS picked, (SELECT count(*) FROM updated)::int AS cancelled
  `.execute(db);
  return result.rows[0] ?? { picked: 0, cancelled: 0 };
}

/**
 * Rewards of these players that this job already cancelled: used when a job starts (or starts again),
 * to count the batches that committed after the last checkpoint was saved (or before the first).
 *
 * Every cancel statement lists what it changed in the same commit (a `job_rewards` row, or a noted
 * slice that becomes `job_rewards` rows when read), so a job that has neither a `job_rewards` row nor a
 * noted slice of these players cannot have cancelled any of them: the answer is 0 from two index
 * probes, without reading the players' rewards. That is every part of a split job on its first start.
 */
export async function countCancelledByJob(
  db: Executor,
  params: { jobId: string; merchantId: string; playerIds: readonly string[] },
): Promise<number> {
  const result = await sql<{ count: number }>`
    SELECT CASE
      WHEN EXISTS (
          SELECT 1 FROM job_rewards WHERE merchant_id = ${params.merchantId}::uuid AND job_id = ${params.jobId}::uuid
        )
        OR EXISTS (
          SELECT 1 FROM job_cancel_slices
          WHERE merchant_id = ${params.merchantId}::uuid AND job_id = ${params.jobId}::uuid
            AND player_ids && ${params.playerIds}::text[]
        )
      THEN (
        SELECT count(*)::int FROM rewards r
        WHERE r.merchant_id = ${params.merchantId}
          AND r.player_id = ANY(${params.playerIds}::text[])
          AND r.status = 'CANCELLED'
          AND r.cancellation_job_id = ${params.jobId}
      )
      ELSE 0
    END AS count
  `.execute(db);
  return result.rows[0]?.count ?? 0;
}
