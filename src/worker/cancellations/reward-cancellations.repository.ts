import { sql } from 'kysely';
import type { Executor } from '../../shared/db/client.js';
import { FINISHED_JOB_CONFLICT } from '../../shared/jobs/cancellation-jobs.repository.js';

/**
 * The SQL that cancels rewards (this file: single cancels; identifier-cancellations.repository.ts: lists
 * of ids; query-cancellations.repository.ts: by players). Every statement is set-based (ids travel as one array parameter),
 * scoped to the merchant, and changes only ACTIVE rewards, so running it twice changes nothing more.
 *
 * A reward counts as `cancelled` for a job when this job moved it to CANCELLED, including in an
 * earlier attempt of the same job (its id is on the reward): a retried job reports the same counts.
 *
 * One lock order: every statement that cancels rewards locks them in reward id order before it changes
 * them (`SELECT … ORDER BY id FOR NO KEY UPDATE` in a CTE, then the UPDATE of exactly those rows, found
 * again by their address: a TID scan, no second index descent; a row keeps its address while locked; an
 * address is always paired with the merchant's id, which prunes the statement to the merchant's partition,
 * where the address names one row, never another merchant's row at the same address in another partition), so two
 * statements over overlapping rewards wait for each other at most, never in a circle: no deadlock,
 * whatever the plans and whichever requests, ids or players they were given, in any order. The one
 * exception is the by-query slice statement, the hot path of a large cancel: it updates in its scan's
 * order without locking first (a lock pass cost it ~40 %), but may wait for a lock only briefly (under
 * Postgres' `deadlock_timeout`, so a cycle is broken before it is detected as a deadlock), and on that
 * lock timeout runs again in id order (`cancelSliceOfPlayers`). docs/design.md §5.
 *
 * Each cancel statement also lists the rewards it changed (see job-rewards.repository.ts), in the same
 * commit: in `job_rewards` from the UPDATE's RETURNING, a single cancel's on its own audit row
 * (`reward_id`), or, for a by-query slice done in one statement, as one `job_cancel_slices` row expanded
 * when the listing is read. What a job cancelled is paged from
 * there, because an index on `rewards.cancellation_job_id` would stop cancels from being HOT updates.
 */

export type RewardOutcome = 'cancelled' | 'alreadyCancelled' | 'notCancellable' | 'notFound';

export interface SingleCancelRequest {
  /** The job the merchant was given: recorded on the reward it cancels. */
  jobId: string;
  merchantId: string;
  rewardId?: string;
  externalId?: string;
  /** For the job's audit row. */
  requestId?: string;
  createdAt: Date;
  startedAt: Date;
}

/**
 * Many single cancels (of any merchants): the coalesced path. Returns one outcome per request, in
 * request order, and writes each request's audit row (`completed`, its outcome, the reward it
 * cancelled) in the same statement as its reward change, so the row says `completed` exactly when the
 * reward change has committed. Job ids must be distinct (each row is written once).
 *
 * One statement per merchant of the batch (`rewards` is partitioned by merchant: a statement that names
 * one merchant touches one partition; docs/design.md "Rewards partitioned by merchant"), run together.
 * One statement rather than a transaction of two: no BEGIN and COMMIT round trips, one message to
 * Postgres and one answer per merchant of a coalesced batch (these run hundreds of times a second).
 */
export async function cancelSingleRewards(
  db: Executor,
  requests: readonly SingleCancelRequest[],
): Promise<RewardOutcome[]> {
  if (requests.length === 0) return [];
  const byMerchant = new Map<string, number[]>();
  requests.forEach((request, index) => {
    const group = byMerchant.get(request.merchantId);
    if (group) group.push(index);
    else byMerchant.set(request.merchantId, [index]);
  });
  const outcomes: RewardOutcome[] = new Array(requests.length);
  await Promise.all(
    [...byMerchant].map(async ([merchantId, indexes]) => {
      const merchantOutcomes = await cancelSingleRewardsOfMerchant(
        db,
        merchantId,
        indexes.map((index) => requests[index] as SingleCancelRequest),
      );
      indexes.forEach((index, position) => {
        outcomes[index] = merchantOutcomes[position] as RewardOutcome;
      });
    }),
  );
  return outcomes;
}

/**
 * The single cancels of one merchant in one statement. Every `ctid` it hands from one step to the next
 * is used with the merchant's id beside it: a row address is unique within one partition only, and the
 * merchant id prunes the statement to the merchant's partition (where the address names one row, and
 * `merchant_id` checks it is the merchant's).
 */
async function cancelSingleRewardsOfMerchant(
  db: Executor,
  merchantId: string,
  requests: readonly SingleCancelRequest[],
): Promise<RewardOutcome[]> {
  // One array per column, so the text is the same for any number of requests.
  const result = await sql<{ ordinal: number; outcome: RewardOutcome }>`
    WITH input AS (
      SELECT * FROM unnest(
        ${requests.map((r) => r.jobId)}::uuid[],
        ${requests.map((r) => r.rewardId ?? null)}::uuid[],
        ${requests.map((r) => r.externalId ?? null)}::text[],
        ${requests.map((r) => r.requestId ?? null)}::text[],
        ${requests.map((r) => r.createdAt)}::timestamptz[],
        ${requests.map((r) => r.startedAt)}::timestamptz[]
      ) WITH ORDINALITY AS t(job_id, reward_id, external_id, request_id, created_at, started_at, ordinal)
    ),
    matched AS (
      SELECT i.ordinal, i.job_id, r.id, r.status, r.cancellation_job_id, r.ctid AS address
      FROM input i JOIN rewards r ON r.merchant_id = ${merchantId}::uuid AND r.id = i.reward_id
      UNION ALL
      SELECT i.ordinal, i.job_id, r.id, r.status, r.cancellation_job_id, r.ctid AS address
      FROM input i JOIN rewards r ON r.merchant_id = ${merchantId}::uuid AND r.external_id = i.external_id
      WHERE i.reward_id IS NULL
    ),
    locked AS MATERIALIZED (
      SELECT r.ctid AS address FROM rewards r
      WHERE r.merchant_id = ${merchantId}::uuid
        AND r.ctid = ANY(ARRAY(SELECT address FROM matched WHERE status = 'ACTIVE')) AND r.status = 'ACTIVE'
      ORDER BY r.id
      FOR NO KEY UPDATE
    ),
    updated AS (
      UPDATE rewards r
      SET status = 'CANCELLED', cancelled_at = now(), cancellation_job_id = m.job_id
      FROM matched m
      WHERE r.merchant_id = ${merchantId}::uuid AND r.id = m.id
        AND r.ctid = ANY(ARRAY(SELECT address FROM locked)) AND r.status = 'ACTIVE'
      RETURNING r.id, r.cancellation_job_id
    ),
    settled AS (
      SELECT i.ordinal, i.job_id, ${merchantId}::uuid AS merchant_id, i.request_id, i.created_at, i.started_at, m.id AS reward_id,
        CASE
          WHEN m.id IS NULL THEN 'notFound'
          WHEN u.id IS NOT NULL THEN 'cancelled'
          WHEN m.status = 'CANCELLED' AND m.cancellation_job_id = i.job_id THEN 'cancelled'
          WHEN m.status IN ('USED', 'EXPIRED') THEN 'notCancellable'
          ELSE 'alreadyCancelled'
        END AS outcome
      FROM input i
      LEFT JOIN matched m ON m.ordinal = i.ordinal
      LEFT JOIN updated u ON u.id = m.id AND u.cancellation_job_id = i.job_id
    ),
    recorded AS (
      INSERT INTO cancellation_jobs AS j (
        id, merchant_id, operation, state, request_id, outcome, reward_id, created_at, started_at, finished_at, attempts
      )
      SELECT job_id, merchant_id, 'cancel'::job_operation, 'completed'::job_state, request_id,
        outcome::cancel_outcome, CASE WHEN outcome = 'cancelled' THEN reward_id END,
        created_at, started_at, now(), 1
      FROM settled
      ${sql.raw(FINISHED_JOB_CONFLICT)}
    )
    SELECT ordinal::int AS ordinal, outcome FROM settled ORDER BY ordinal
  `.execute(db);
  return result.rows.map((row) => row.outcome);
}
