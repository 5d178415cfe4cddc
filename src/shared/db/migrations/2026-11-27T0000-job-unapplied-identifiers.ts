import { type Kysely, sql } from 'kysely';

/**
 * What a bulkCancel did not apply, per identifier: each id or external id of a by-id job that named no
 * reward of the merchant (`notFound`), a used or expired reward (`notCancellable`), or one another job
 * had already cancelled (`alreadyCancelled`). Written in the transaction of the batch that met the
 * identifier (so a retried batch writes the same rows again, harmlessly); read by
 * `POST /api/v1/integration/jobs/unapplied` in key order (keyset pages); removed with the job by the
 * retention sweeper. Identifiers the job did cancel have no row: `jobs/rewards` lists those.
 * A new, empty table: nothing to lock or rewrite on a large database.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE job_unapplied_identifiers (
      merchant_id uuid NOT NULL,
      job_id uuid NOT NULL,
      kind text NOT NULL CHECK (kind IN ('id', 'externalId')),
      identifier text NOT NULL CHECK (length(identifier) BETWEEN 1 AND 255),
      outcome text NOT NULL CHECK (outcome IN ('notFound', 'notCancellable', 'alreadyCancelled')),
      PRIMARY KEY (merchant_id, job_id, kind, identifier)
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS job_unapplied_identifiers`.execute(db);
}
