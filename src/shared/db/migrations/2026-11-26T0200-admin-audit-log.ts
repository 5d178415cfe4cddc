import { type Kysely, sql } from 'kysely';

/**
 * The admin audit log: one row per admin write (API or queue dashboard), written in the write's own
 * transaction or before it, never after. `before` and `after` hold the settings a change replaced and
 * set (never a secret). Listed newest first by `id` (keyset pages); removed by the retention sweeper
 * once older than RETENTION_MS, through `created_at`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE admin_audit_log (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT now(),
      operator text NOT NULL,
      action text NOT NULL,
      target text,
      before jsonb,
      after jsonb,
      request_id text
    )
  `.execute(db);
  await sql`CREATE INDEX admin_audit_log_created_at_idx ON admin_audit_log (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS admin_audit_log`.execute(db);
}
