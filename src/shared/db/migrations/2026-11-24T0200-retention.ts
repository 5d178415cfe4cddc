import { type Kysely, sql } from 'kysely';

/**
 * The indexes the retention sweeper (src/worker/retention/) walks, oldest first, to find what has
 * outlived RETENTION_MS: finished jobs by `finished_at`, webhook deliveries by `created_at`, sessions
 * by `expires_at`. Without them each batch of the sweep would scan the whole table.
 *
 * None is on a column a cancel writes (rewards keep their HOT updates); `finished_at` and `created_at`
 * are written once per row. The partial indexes leave out the rows the sweep never removes (jobs not
 * finished, sessions that never expire), so they stay small.
 *
 * Plain CREATE INDEX: it blocks writes to each table while it builds. On a deployment that already
 * holds many rows, create them beforehand with CREATE INDEX CONCURRENTLY under the same names (IF NOT
 * EXISTS then finds them).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX IF NOT EXISTS cancellation_jobs_finished_at_idx
      ON cancellation_jobs (finished_at) WHERE finished_at IS NOT NULL
  `.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS webhook_deliveries_created_at_idx ON webhook_deliveries (created_at)`.execute(
    db,
  );
  await sql`
    CREATE INDEX IF NOT EXISTS sessions_expires_at_idx ON sessions (expires_at) WHERE expires_at IS NOT NULL
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS sessions_expires_at_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS webhook_deliveries_created_at_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS cancellation_jobs_finished_at_idx`.execute(db);
}
