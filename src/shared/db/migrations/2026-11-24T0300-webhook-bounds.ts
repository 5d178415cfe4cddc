import { type Kysely, sql } from 'kysely';

/**
 * Bounds for a dead receiver. A merchant's webhook may be disabled: `failing_since` is the first failed
 * attempt after its last delivery (null while it delivers), and once every attempt has failed for
 * WEBHOOK_DISABLE_AFTER_MS the endpoint is disabled (`disabled_at`, `disabled_reason`) until a PUT sets
 * it again. A delivery may end `dropped`: given up unsent (the merchant's pending cap, or its endpoint
 * disabled), with the reason in `last_error`.
 *
 * The state check is replaced NOT VALID and then validated, so the table is not held under an exclusive
 * lock while every row is read.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE merchant_webhooks
      ADD COLUMN failing_since timestamptz,
      ADD COLUMN disabled_at timestamptz,
      ADD COLUMN disabled_reason text
  `.execute(db);
  await sql`
    ALTER TABLE webhook_deliveries
      DROP CONSTRAINT webhook_deliveries_state_check,
      ADD CONSTRAINT webhook_deliveries_state_check
        CHECK (state IN ('pending', 'delivered', 'failed', 'dropped')) NOT VALID
  `.execute(db);
  await sql`ALTER TABLE webhook_deliveries VALIDATE CONSTRAINT webhook_deliveries_state_check`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_deliveries
      DROP CONSTRAINT webhook_deliveries_state_check,
      ADD CONSTRAINT webhook_deliveries_state_check CHECK (state IN ('pending', 'delivered', 'failed')) NOT VALID
  `.execute(db);
  await sql`
    ALTER TABLE merchant_webhooks
      DROP COLUMN failing_since,
      DROP COLUMN disabled_at,
      DROP COLUMN disabled_reason
  `.execute(db);
}
