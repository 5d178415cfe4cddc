import { type Kysely, sql } from 'kysely';

/**
 * Completion webhooks: at most one per merchant (`merchant_webhooks`), and one row per event sent to
 * it (`webhook_deliveries`), which the admin API lists. `payload` is `json`, not `jsonb`, so that the
 * body is kept byte for byte as it was signed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE merchant_webhooks (
      merchant_id uuid PRIMARY KEY REFERENCES merchants (id) ON DELETE CASCADE,
      url text NOT NULL,
      events text[] NOT NULL CHECK (cardinality(events) > 0),
      secret text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
  await sql`
    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
      type text NOT NULL,
      job_id text NOT NULL,
      payload json NOT NULL,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      last_status integer,
      last_error text,
      next_attempt_at timestamptz,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
  // The admin list: a merchant's latest deliveries, newest first.
  await sql`CREATE INDEX webhook_deliveries_merchant_created ON webhook_deliveries (merchant_id, created_at DESC)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE webhook_deliveries`.execute(db);
  await sql`DROP TABLE merchant_webhooks`.execute(db);
}
