import { type Kysely, sql } from 'kysely';

/**
 * Less written per cancel (docs/design.md "What each table keeps per cancel"). Measured 2026-11-24 on
 * 100,000 single cancels through the real statements: 506 bytes of bookkeeping each (a
 * `cancellation_jobs` row of 205 bytes with two index entries, and a `job_rewards` row of 101 bytes for
 * its one reward with its own key), and 170 bytes per reward of a 100-id bulkCancel (one `job_rewards`
 * row per bucket touched: about 82 rows of one or two ids each). After: about 220 and 20.
 *
 * - `cancellation_jobs_merchant_created_idx` is dropped: no statement reads jobs by merchant and time
 *   (every read is by id), and each single cancel paid an entry in it.
 * - `id` text → uuid (every job id is made by randomUUID, a single cancel's from its batch's), 37 bytes → 16 in the row and
 *   in the primary key. `operation` and `state` become enums (4 bytes instead of 7–18), `attempts`
 *   smallint. `updated_at` is dropped: nothing read it (`started_at`/`finished_at` say when a job moved).
 * - A single cancel's counts are one `outcome` (which of the four its one reward had); its five count
 *   columns stay NULL (free in the row's null bitmap). A bulk job keeps its counts as before.
 * - A single cancel's reward is `reward_id` on its own row (set when the job cancelled it), instead of a
 *   `job_rewards` row and key of its own: what the job cancelled is paged from there (job-rewards.repository.ts).
 *   Rows single cancels wrote in `job_rewards` before this stay there and are still read.
 * - `job_rewards.bucket` may be -1: a statement that lists fewer than LIST_BY_BUCKET_FROM ids writes them as
 *   one sorted row instead of one row per first byte (a 100-id batch touched ~82 buckets: 82 rows and
 *   keys for 100 ids). Pages merge those rows with the bucketed ones (job-rewards.repository.ts).
 *
 * Locks at size (for the migrations-at-size work): the ALTER TABLE of `cancellation_jobs` rewrites the
 * table and its primary key under an ACCESS EXCLUSIVE lock (a type change), for a time that grows with the
 * table (every job ever recorded, until retention deletes them); job status reads from Postgres and every
 * single cancel wait on it. The check on `job_rewards.bucket` is added NOT VALID and validated apart, which
 * scans the table under a SHARE UPDATE EXCLUSIVE lock only (writes go on) — but inside this migration's
 * transaction the DROP CONSTRAINT's ACCESS EXCLUSIVE lock is held until commit. On a large deployment run
 * this in a maintenance window, or as new table + copy + swap.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX cancellation_jobs_merchant_created_idx`.execute(db);
  await sql`CREATE TYPE job_operation AS ENUM ('cancel', 'bulkCancel', 'bulkCancelByQuery')`.execute(db);
  await sql`
    CREATE TYPE job_state AS ENUM ('queued', 'running', 'completed', 'failed', 'cancelling', 'cancelled')
  `.execute(db);
  await sql`
    CREATE TYPE cancel_outcome AS ENUM ('cancelled', 'alreadyCancelled', 'notCancellable', 'notFound')
  `.execute(db);
  // One statement, one rewrite. The state check is the enum now.
  await sql`
    ALTER TABLE cancellation_jobs
      DROP CONSTRAINT cancellation_jobs_state_check,
      ALTER COLUMN id TYPE uuid USING id::uuid,
      ALTER COLUMN operation TYPE job_operation USING operation::job_operation,
      ALTER COLUMN state TYPE job_state USING state::job_state,
      ALTER COLUMN attempts TYPE smallint,
      DROP COLUMN updated_at,
      ADD COLUMN outcome cancel_outcome,
      ADD COLUMN reward_id uuid
  `.execute(db);
  await sql`
    ALTER TABLE job_rewards
      DROP CONSTRAINT job_rewards_bucket_check,
      ADD CONSTRAINT job_rewards_bucket_check CHECK (bucket BETWEEN -1 AND 255) NOT VALID
  `.execute(db);
  await sql`ALTER TABLE job_rewards VALIDATE CONSTRAINT job_rewards_bucket_check`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Single cancels' rewards go back to `job_rewards` rows, whole-statement rows back to buckets.
  await sql`
    INSERT INTO job_rewards (job_id, bucket, first_id, reward_ids)
    SELECT id, get_byte(uuid_send(reward_id), 0), reward_id, ARRAY[reward_id]
    FROM cancellation_jobs WHERE reward_id IS NOT NULL
    ON CONFLICT DO NOTHING
  `.execute(db);
  await sql`
    WITH whole AS (DELETE FROM job_rewards WHERE bucket = -1 RETURNING job_id, reward_ids)
    INSERT INTO job_rewards (job_id, bucket, first_id, reward_ids)
    SELECT job_id, bucket, ids[1], ids
    FROM (
      SELECT job_id, bucket, array_agg(id ORDER BY id) AS ids
      FROM (SELECT job_id, id, get_byte(uuid_send(id), 0) AS bucket FROM whole, unnest(reward_ids) AS id) u
      GROUP BY job_id, bucket
    ) sorted
    ON CONFLICT DO NOTHING
  `.execute(db);
  await sql`
    ALTER TABLE job_rewards
      DROP CONSTRAINT job_rewards_bucket_check,
      ADD CONSTRAINT job_rewards_bucket_check CHECK (bucket BETWEEN 0 AND 255)
  `.execute(db);
  await sql`
    UPDATE cancellation_jobs SET requested = 1,
      cancelled = (outcome = 'cancelled')::int, already_cancelled = (outcome = 'alreadyCancelled')::int,
      not_cancellable = (outcome = 'notCancellable')::int, not_found = (outcome = 'notFound')::int
    WHERE outcome IS NOT NULL
  `.execute(db);
  await sql`
    ALTER TABLE cancellation_jobs
      DROP COLUMN reward_id,
      DROP COLUMN outcome,
      ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
      ALTER COLUMN attempts TYPE integer,
      ALTER COLUMN state TYPE text,
      ALTER COLUMN operation TYPE text,
      ALTER COLUMN id TYPE text,
      ADD CONSTRAINT cancellation_jobs_state_check
        CHECK (state IN ('queued', 'running', 'completed', 'failed', 'cancelling', 'cancelled'))
  `.execute(db);
  await sql`DROP TYPE cancel_outcome, job_state, job_operation`.execute(db);
  await sql`CREATE INDEX cancellation_jobs_merchant_created_idx ON cancellation_jobs (merchant_id, created_at DESC)`.execute(
    db,
  );
}
