import { type Kysely, sql } from 'kysely';

/**
 * Per merchant: refuse version-1 signatures on the routes that change or stop work (the three cancel
 * routes and the abort), so a v1 signature read from a log cannot cancel anything even within its
 * window. Every existing merchant stays as it is (false). A constant default is kept in the catalogue
 * (Postgres 11 and later): adding the column does not rewrite the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE merchants ADD COLUMN require_signature_v2 boolean NOT NULL DEFAULT false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE merchants DROP COLUMN require_signature_v2`.execute(db);
}
