import { type Kysely, sql } from 'kysely';

/**
 * A merchant's own cap on its bulk jobs queued or running; null: the deployment's default
 * (MAX_QUEUED_JOBS). Adding a nullable column without a default only changes the catalogue: no
 * table rewrite, whatever the number of merchants.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE merchants
      ADD COLUMN max_queued_jobs integer CHECK (max_queued_jobs > 0)
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE merchants DROP COLUMN max_queued_jobs`.execute(db);
}
