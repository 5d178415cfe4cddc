import { type Kysely, sql } from 'kysely';

/**
 * Which rewards each job cancelled, for paging through them in id order
 * (POST /api/v1/integration/jobs/rewards).
 *
 * Not an index on `rewards.cancellation_job_id`: a cancel writes that column, and an index on any
 * column a cancel writes turns its HOT updates (no index maintenance) into full ones, several times
 * slower. Not one row per reward either: measured on 100,000 rewards cancelled in batches of 10,000,
 * a `(job_id, reward_id)` row per reward more than doubled the cancel's time (random keys into a
 * B-tree, WAL for every row), while rows of sorted id arrays cost about a fifth more.
 *
 * So each cancel statement adds, from its UPDATE's RETURNING, one row per job and `bucket` (the first
 * byte of the reward id, 0 to 255) holding that bucket's reward ids, sorted. Ids in a lower bucket
 * are lower ids, so a page in id order reads the buckets in key order from the one of `after` on
 * and stops once the page is full: about 1/256 of a large job per 1,000-reward page. No foreign key:
 * the rows are written by the statement that cancels the rewards, and rewards are never deleted.
 *
 * Rewards cancelled before this migration are listed once here (one pass over `rewards`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE job_rewards (
      job_id uuid NOT NULL,
      bucket smallint NOT NULL CHECK (bucket BETWEEN 0 AND 255),
      first_id uuid NOT NULL,
      reward_ids uuid[] NOT NULL,
      PRIMARY KEY (job_id, bucket, first_id)
    )
  `.execute(db);
  await sql`
    INSERT INTO job_rewards (job_id, bucket, first_id, reward_ids)
    SELECT job_id, bucket, (array_agg(id ORDER BY id))[1], array_agg(id ORDER BY id)
    FROM (
      SELECT cancellation_job_id AS job_id, id, get_byte(uuid_send(id), 0) AS bucket
      FROM rewards WHERE cancellation_job_id IS NOT NULL
    ) cancelled
    GROUP BY job_id, bucket
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE job_rewards`.execute(db);
}
