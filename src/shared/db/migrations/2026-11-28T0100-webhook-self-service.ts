import { type Kysely, sql } from 'kysely';

/**
 * Merchants manage their own webhook (the signed merchant API):
 *
 * - `merchant_webhooks.previous_secret` / `previous_secret_expires_at`: after a rotation the replaced
 *   secret (sealed like `secret`) signs every delivery too until it expires, so a receiver can switch
 *   secrets without missing one.
 * - `webhook_delivery_attempts`: one row per attempt that was sent (time, HTTP status or none, how long it
 *   took, why it failed), for the merchant's delivery log. Removed with its delivery (the retention sweeper
 *   deletes deliveries; the cascade takes their few attempts along).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE merchant_webhooks
      ADD COLUMN previous_secret text,
      ADD COLUMN previous_secret_expires_at timestamptz
  `.execute(db);
  await sql`
    CREATE TABLE webhook_delivery_attempts (
      event_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      attempted_at timestamptz NOT NULL DEFAULT now(),
      status integer,
      duration_ms integer NOT NULL,
      error text
    )
  `.execute(db);
  await sql`CREATE INDEX webhook_delivery_attempts_event ON webhook_delivery_attempts (event_id, attempted_at)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS webhook_delivery_attempts`.execute(db);
  await sql`
    ALTER TABLE merchant_webhooks DROP COLUMN IF EXISTS previous_secret, DROP COLUMN IF EXISTS previous_secret_expires_at
  `.execute(db);
}
