import { type Kysely, sql } from 'kysely';

/**
 * Enough free room on each rewards page for every row on it to be cancelled as a HOT update.
 *
 * A cancelled row version is 24 bytes wider than the ACTIVE one it replaces (`cancelled_at`, the
 * job's uuid, a longer status): 152 bytes instead of 128 for the seeded rows. At fillfactor 50 a page
 * holds 30 rows and 4,208 free bytes, room for only 26 new versions (plus their line pointers); the
 * other 4 (13 %) were full updates, each a new row on another page and an entry in every index (a
 * random leaf of the primary key among them). At fillfactor 45 a page holds 27 rows and room for all of
 * their new versions. Measured on 1,000,000 rewards (this 2-core machine, EXPLAIN and backend CPU
 * time): 87 % → 100 % HOT; one UPDATE of all the rows recording a job id 5.5–6.4 s of CPU → 2.9–3.9 s;
 * the worker's batched statements over two connections 9.1–11.4 s of CPU → 6.1–7.8 s. The table is 11 %
 * larger (37,038 pages instead of 33,334).
 *
 * Like 2026-11-21T0000, it applies to pages written from then on; on a deployment that already holds
 * many rewards, `VACUUM FULL rewards` (in a maintenance window) lays the existing rows out again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE rewards SET (fillfactor = 45)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE rewards SET (fillfactor = 50)`.execute(db);
}
