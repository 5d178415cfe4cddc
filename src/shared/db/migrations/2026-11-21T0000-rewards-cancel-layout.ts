import { type Kysely, sql } from 'kysely';

/**
 * The rewards table laid out for cancels, after measuring them (1,000,000 rewards, 10,000 players ×
 * 100, chunks of 10,000, on this project's 2-core machines):
 *
 * - fillfactor 50: half of each page stays free for the new row versions that cancels write, so they
 *   are HOT updates (no index entries to write, pages pruned between chunks). At fillfactor 85 only
 *   16 % of the cancels were HOT; at 50, 77–93 %, and the chunked cancel ran 2–4× faster. The table is
 *   about twice the size, which a table whose rows are mostly updated once (cancelled, used, expired)
 *   pays back in write amplification.
 * - `cancellation_job_id` as `uuid` (16 bytes) instead of text (37): job ids are UUIDs, and the
 *   narrower row version fits the free space more often (87 % HOT instead of 77 %, 18 % faster).
 *
 * The type change rewrites the table; the fillfactor applies to pages written from then on. On a
 * deployment that already holds many rewards, run this in a maintenance window.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE rewards SET (fillfactor = 50)`.execute(db);
  await sql`ALTER TABLE rewards ALTER COLUMN cancellation_job_id TYPE uuid USING cancellation_job_id::uuid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE rewards ALTER COLUMN cancellation_job_id TYPE text`.execute(db);
  await sql`ALTER TABLE rewards SET (fillfactor = 85)`.execute(db);
}
