import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * The list of rewards each job cancelled (table `job_rewards`; its migrations, 2026-11-22T0400 and
 * 2026-11-24T0100, say why it has this shape): written by the cancel statements, or listed from a
 * by-query job's deferred slices (`job_cancel_slices`, see its migration) by the worker once the job is
 * done; a single cancel's one reward is on its audit row instead (`cancellation_jobs.reward_id`); read
 * page by page.
 */

/**
 * Statements that change fewer rewards than this list them as one sorted row (`bucket` -1) rather than
 * one row per first byte. A row and its key cost about 140 bytes besides its ids (16 bytes each): a
 * 100-id batch touched ~82 buckets, 170 bytes per reward; as one row, about 20 (measured 2026-11-24). From
 * 2,048 ids on, buckets hold 8 ids on average, under 40 bytes per reward, and pages of a large job read
 * only the buckets they need.
 */
const LIST_BY_BUCKET_FROM = 2_048;

/**
 * The part of a cancel statement that lists what it cancelled, for one job, in the statement's WITH list,
 * after a CTE `from` (`updated` by default) that returns the `id` of the rewards the statement changed:
 * one row per bucket (first byte of the id, the ids sorted), or one row of them all when they are fewer
 * than LIST_BY_BUCKET_FROM. Grouping by bucket alone, with the job id a parameter, made the listing cheaper
 * (measured on the bulk batch statement, 2026-11-22). Only changed rewards are listed, and a reward
 * changes once, so a retried batch lists nothing twice (ON CONFLICT makes sure of it). Also lists the
 * rewards of expanded deferred slices.
 */
export function listCancelledRewardsOfJob(merchantId: string, jobId: string, from = 'updated') {
  return sql`
  listed AS (
    INSERT INTO job_rewards (merchant_id, job_id, bucket, first_id, reward_ids)
    SELECT ${merchantId}::uuid, ${jobId}::uuid, bucket, ids[1], ids
    FROM (
      SELECT bucket, array_agg(id ORDER BY id) AS ids
      FROM (
        SELECT id, CASE WHEN (SELECT count(*) FROM ${sql.ref(from)}) < ${sql.lit(LIST_BY_BUCKET_FROM)} THEN -1
          ELSE get_byte(uuid_send(id), 0) END AS bucket
        FROM ${sql.ref(from)}
      ) u
      GROUP BY bucket
    ) sorted
    ON CONFLICT DO NOTHING
  )
`;
}

/** A job's records are keyed by its merchant first (docs/design.md "Rewards partitioned by merchant"). */
export interface JobKey {
  merchantId: string;
  jobId: string;
}

interface JobReward {
  id: string;
  externalId: string | null;
  playerId: string;
}

export interface JobRewardsPage {
  rewards: JobReward[];
  /** The `after` of the next page; null when this page is the last. */
  next: string | null;
}

/** Deferred slices listed per statement: about this many batches of rewards, a fraction of a second. */
const SLICES_PER_STATEMENT = 10;

/**
 * Turns a job's deferred slices (`job_cancel_slices`, written by one-statement by-query slices) into
 * `job_rewards` rows, in statements of a few slices each, until the job has none left. A slice's
 * rewards are its players' rewards that carry the job id and the statement's `cancelled_at`. Each
 * statement takes the oldest few slices, deletes them and lists their rewards in one go, so a slice is
 * listed exactly once however many workers race; each is its own short transaction.
 *
 * Run by the worker only (the API reads, never writes): in the job's last step when the job is small,
 * else by the worker's lister right after the job completed (src/worker/jobs/job-end/deferred-slice-lister.ts).
 * `skipLocked` (the lister): slices another worker is listing are left to it instead of waited for.
 */
export async function listDeferredSlices(
  db: Kysely<Database>,
  { merchantId, jobId }: JobKey,
  { skipLocked }: { skipLocked: boolean },
): Promise<void> {
  const locking = skipLocked ? sql`FOR UPDATE SKIP LOCKED` : sql`FOR UPDATE`;
  for (;;) {
    const result = await sql<{ taken: number; more: boolean }>`
      WITH taken AS (
        DELETE FROM job_cancel_slices
        WHERE merchant_id = ${merchantId}::uuid AND job_id = ${jobId}::uuid AND id IN (
          SELECT id FROM job_cancel_slices
          WHERE merchant_id = ${merchantId}::uuid AND job_id = ${jobId}::uuid
          ORDER BY id LIMIT ${SLICES_PER_STATEMENT}
          ${locking}
        )
        RETURNING id, cancelled_at, player_ids
      ),
      cancelled AS (
        SELECT r.id
        FROM taken t
        JOIN rewards r ON r.merchant_id = ${merchantId}::uuid
          AND r.player_id = ANY(t.player_ids)
          AND r.cancellation_job_id = ${jobId}::uuid
          AND r.cancelled_at = t.cancelled_at
      ),
      ${listCancelledRewardsOfJob(merchantId, jobId, 'cancelled')}
      SELECT (SELECT count(*) FROM taken)::int AS taken,
        EXISTS (
          SELECT 1 FROM job_cancel_slices s
          WHERE s.merchant_id = ${merchantId}::uuid AND s.job_id = ${jobId}::uuid
            AND s.id NOT IN (SELECT id FROM taken)
        ) AS more
    `.execute(db);
    const row = result.rows[0];
    // Nothing taken while some are left: another worker holds them (skipLocked) and lists them.
    if (!row?.more || row.taken === 0) return;
  }
}

/** Jobs with a deferred slice noted before `olderThanMs` ago: left by a worker that stopped before listing them. */
export async function jobsWithOldDeferredSlices(db: Kysely<Database>, olderThanMs: number): Promise<JobKey[]> {
  const result = await sql<JobKey>`
    SELECT DISTINCT merchant_id::text AS "merchantId", job_id::text AS "jobId" FROM job_cancel_slices
    WHERE cancelled_at < now() - make_interval(secs => ${olderThanMs / 1000})
    LIMIT 100
  `.execute(db);
  return result.rows;
}

/** Whether some of the job's rewards are not listed yet (deferred slices left): one index probe. */
export async function hasDeferredSlices(db: Kysely<Database>, { merchantId, jobId }: JobKey): Promise<boolean> {
  const result = await sql<{ pending: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM job_cancel_slices WHERE merchant_id = ${merchantId}::uuid AND job_id = ${jobId}::uuid
    ) AS pending
  `.execute(db);
  return result.rows[0]?.pending ?? false;
}

/** Below every uuid: the start of the first page. */
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/**
 * One page of the rewards a job cancelled, in id order, after the reward id `after` (keyset paging).
 * Read only: a job's deferred slices are listed by the worker (`listDeferredSlices`); the caller checks
 * `hasDeferredSlices` first.
 * Three sources, merged by id: the bucketed rows, read in key order from the bucket of `after` on, where
 * the planner stops once the page is full (an incremental sort on the presorted bucket): a 1,000-reward
 * page of a 1,000,000-reward job reads about 4,000 ids, not the million; the short statements' whole rows
 * (`bucket` -1), read whole (each under LIST_BY_BUCKET_FROM ids); and a single cancel's reward, on its
 * own audit row. Each reward is then read by id, scoped to the merchant as well, so another merchant's
 * reward can never appear. One row more than the page is read to know whether another page follows.
 */
export async function listJobRewards(
  db: Kysely<Database>,
  params: { jobId: string; merchantId: string; after: string | undefined; limit: number },
): Promise<JobRewardsPage> {
  const { jobId, merchantId, limit } = params;
  const after = params.after ?? FIRST_ID;
  const result = await sql<JobReward>`
    WITH bucketed AS (
      SELECT id
      FROM job_rewards b, unnest(b.reward_ids) AS id
      WHERE b.merchant_id = ${merchantId}::uuid AND b.job_id = ${jobId}::uuid
        AND b.bucket >= get_byte(uuid_send(${after}::uuid), 0)
        AND id > ${after}::uuid
      ORDER BY b.bucket, id
      LIMIT ${limit + 1}
    ),
    whole AS (
      SELECT id
      FROM job_rewards b, unnest(b.reward_ids) AS id
      WHERE b.merchant_id = ${merchantId}::uuid AND b.job_id = ${jobId}::uuid AND b.bucket = -1
        AND id > ${after}::uuid
      ORDER BY id
      LIMIT ${limit + 1}
    ),
    single AS (
      SELECT reward_id AS id FROM cancellation_jobs
      WHERE merchant_id = ${merchantId}::uuid AND id = ${jobId}::uuid AND reward_id > ${after}::uuid
    ),
    page AS (
      SELECT id FROM (SELECT id FROM bucketed UNION ALL SELECT id FROM whole UNION ALL SELECT id FROM single) listed
      ORDER BY id
      LIMIT ${limit + 1}
    )
    SELECT r.id, r.external_id AS "externalId", r.player_id AS "playerId"
    FROM page JOIN rewards r ON r.merchant_id = ${merchantId}::uuid AND r.id = page.id
    ORDER BY r.id
  `.execute(db);
  const rewards = result.rows.slice(0, limit);
  const next = result.rows.length > limit ? (rewards.at(-1)?.id ?? null) : null;
  return { rewards, next };
}
