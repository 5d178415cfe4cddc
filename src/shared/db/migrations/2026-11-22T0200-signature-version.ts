import { type Kysely, sql } from 'kysely';

/**
 * Which signature rule a merchant's requests must follow: 1, the interface's (merchantId and
 * timestamp only), or 2, which also requires an `X-Signature` header over the method, path, query
 * and raw body. Every existing merchant stays on 1. A constant default is stored in the catalogue
 * (Postgres 11 and later), so adding the column does not rewrite the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE merchants
      ADD COLUMN signature_version smallint NOT NULL DEFAULT 1 CHECK (signature_version IN (1, 2))
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE merchants DROP COLUMN signature_version`.execute(db);
}
