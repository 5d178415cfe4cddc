import { type Kysely, sql } from 'kysely';

/**
 * The merchant portal (docs/portal.md):
 *
 * - `portal_links`: a link an operator issued for one merchant, valid 15 minutes and used at most once.
 *   Only the SHA-256 of its token is kept: a copy of the table opens nothing. `used_at` is set by the one
 *   statement that consumes it (`UPDATE … WHERE used_at IS NULL AND expires_at > now()`), so two
 *   requests with the same link cannot both open a session.
 * - `portal_sessions`: what a link opened, 8 hours; the browser holds the token in a cookie, the table its
 *   SHA-256 and the merchant it is scoped to. Revoked by the operator (`revoked_at`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE portal_links (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
      token_hash bytea NOT NULL UNIQUE,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )
  `.execute(db);
  await sql`CREATE INDEX portal_links_expires_at_idx ON portal_links (expires_at)`.execute(db);
  await sql`
    CREATE TABLE portal_sessions (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
      link_id uuid NOT NULL,
      token_hash bytea NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      revoked_by text
    )
  `.execute(db);
  await sql`CREATE INDEX portal_sessions_merchant_idx ON portal_sessions (merchant_id, created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS portal_sessions`.execute(db);
  await sql`DROP TABLE IF EXISTS portal_links`.execute(db);
}
