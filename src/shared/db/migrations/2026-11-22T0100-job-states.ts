import { type Kysely, sql } from 'kysely';

/**
 * Jobs can be aborted by their merchant: `cancelling` while the batch in flight finishes, `cancelled`
 * once it has. Only the CHECK constraint changes (validated against the existing rows, which all hold).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE cancellation_jobs
      DROP CONSTRAINT cancellation_jobs_state_check,
      ADD CONSTRAINT cancellation_jobs_state_check
        CHECK (state IN ('queued', 'running', 'completed', 'failed', 'cancelling', 'cancelled'))
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE cancellation_jobs
      DROP CONSTRAINT cancellation_jobs_state_check,
      ADD CONSTRAINT cancellation_jobs_state_check CHECK (state IN ('queued', 'running', 'completed', 'failed'))
  `.execute(db);
}
