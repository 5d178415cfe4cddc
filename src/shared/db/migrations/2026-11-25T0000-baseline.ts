import { type Kysely, type Migration, sql } from 'kysely';

/**
 * The whole schema in one migration: the thirteen migrations of 2026-11-20 to 2026-11-24 folded into
 * one (the service had not been released; issue 24 allowed it once), plus `rewards` hash-partitioned by
 * `merchant_id` and `merchant_id` in every key of rewards and of a job's records. Frozen like any
 * migration: later changes get a migration of their own (docs/design.md "Rewards partitioned by
 * merchant" says how to add an index to `rewards`).
 *
 * Rewards (the layout measured for cancels, docs/design.md §5 and bench/README.md):
 * - `PARTITION BY HASH (merchant_id)` into `rewardPartitions` tables `rewards_p<remainder>`
 *   (REWARD_PARTITIONS, read by this first migration only: from then on the count is the catalogue's).
 *   Every statement names its merchant, so it is planned (or pruned at its start) onto one partition,
 *   whose indexes and pages are a fraction of the table's, vacuumed on their own. The partition key must
 *   be in every unique index, hence `(merchant_id, id)` as the primary key.
 * - No index mentions `status`, `cancelled_at` or `cancellation_job_id`, the columns a cancel writes,
 *   so a cancel is a HOT update (no index maintenance).
 * - fillfactor 45 on each partition (a partitioned parent has no storage of its own): enough free room on
 *   each page for every row on it to be cancelled as a HOT update (a cancelled row version is 24 bytes
 *   wider: 152 bytes instead of 128 for the seeded rows; measured 87 % → 100 % HOT, one UPDATE of
 *   1,000,000 rows 5.5–6.4 s of CPU → 2.9–3.9 s).
 * - `cancellation_job_id` is a uuid (16 bytes, not 37 as text): the narrower row version fits the free
 *   space more often.
 * - `(merchant_id, player_id, id)` serves the keyset walk of bulkCancelByQuery; `(merchant_id,
 *   external_id)` is both the uniqueness rule and the lookup of cancels by external id.
 *
 * Job records (docs/design.md "What each table keeps per cancel"): `cancellation_jobs` keyed by
 * `(merchant_id, id)`, with enums for operation, state and a single cancel's outcome; `job_rewards` (which
 * rewards a job cancelled: sorted id arrays by first byte of the id, or `bucket` -1 for a short
 * statement's whole list) and `job_cancel_slices` (by-query slices listed when read) keyed merchant first.
 * Not an index on `rewards.cancellation_job_id`: it would turn cancels into non-HOT updates.
 *
 * Sessions: the token digest is unique per merchant (`/betSlip` always names its merchant);
 * `bet_slip_json` holds the items as /betSlip answers them, written once (`json` keeps the text as
 * written). The partial indexes on `finished_at` and `expires_at`, and the one on `created_at`, are the
 * retention sweeper's walks.
 */
export function baseline({ rewardPartitions }: { rewardPartitions: number }): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createSchema(db, rewardPartitions);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await sql`
        DROP TABLE job_cancel_slices, job_rewards, webhook_deliveries, merchant_webhooks, cancellation_jobs,
          bet_slip_items, sessions, wallets, players, rewards, bet_constraints, game_reward_configurations,
          reward_configurations, merchants;
        DROP TYPE cancel_outcome, job_state, job_operation;
      `.execute(db);
    },
  };
}

async function createSchema(db: Kysely<unknown>, rewardPartitions: number): Promise<void> {
  if (!Number.isInteger(rewardPartitions) || rewardPartitions < 1) {
    throw new Error(`the number of rewards partitions must be a positive integer, not ${rewardPartitions}`);
  }
  await sql`
    CREATE TYPE job_operation AS ENUM ('cancel', 'bulkCancel', 'bulkCancelByQuery');
    CREATE TYPE job_state AS ENUM ('queued', 'running', 'completed', 'failed', 'cancelling', 'cancelled');
    CREATE TYPE cancel_outcome AS ENUM ('cancelled', 'alreadyCancelled', 'notCancellable', 'notFound');

    CREATE TABLE merchants (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
      secret_key text NOT NULL,
      previous_secret_key text,
      previous_secret_valid_until timestamptz,
      status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'DISABLED')),
      allowed_ips text[],
      rate_limit_per_second integer CHECK (rate_limit_per_second > 0),
      max_queued_jobs integer CHECK (max_queued_jobs > 0),
      signature_version smallint NOT NULL DEFAULT 1 CHECK (signature_version IN (1, 2)),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE reward_configurations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      external_id text CHECK (length(external_id) BETWEEN 1 AND 255),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
      status text NOT NULL CHECK (status IN ('ACTIVE', 'INACTIVE')),
      reward_type text NOT NULL CHECK (reward_type IN ('FREE_BET')),
      number_of_free_bets integer NOT NULL CHECK (number_of_free_bets > 0),
      start_date timestamptz NOT NULL,
      end_date timestamptz NOT NULL,
      duration_minutes integer NOT NULL CHECK (duration_minutes > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (end_date >= start_date)
    );
    CREATE UNIQUE INDEX reward_configurations_merchant_external_id_key
      ON reward_configurations (merchant_id, external_id);
    CREATE INDEX reward_configurations_merchant_start_date_idx
      ON reward_configurations (merchant_id, start_date DESC, id);

    CREATE TABLE game_reward_configurations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      reward_configuration_id uuid NOT NULL REFERENCES reward_configurations (id) ON DELETE CASCADE,
      game_id integer NOT NULL,
      UNIQUE (reward_configuration_id, game_id)
    );

    CREATE TABLE bet_constraints (
      game_reward_configuration_id uuid NOT NULL REFERENCES game_reward_configurations (id) ON DELETE CASCADE,
      currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      bet_amount numeric NOT NULL CHECK (bet_amount > 0),
      max_win_per_bet numeric NOT NULL CHECK (max_win_per_bet > 0),
      PRIMARY KEY (game_reward_configuration_id, currency)
    );

    CREATE TABLE rewards (
      id uuid NOT NULL DEFAULT gen_random_uuid(),
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      external_id text CHECK (length(external_id) BETWEEN 1 AND 255),
      player_id text NOT NULL CHECK (length(player_id) BETWEEN 1 AND 255),
      reward_configuration_id uuid NOT NULL REFERENCES reward_configurations (id),
      status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'USED', 'EXPIRED', 'CANCELLED')),
      cancelled_at timestamptz,
      cancellation_job_id uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, id)
    ) PARTITION BY HASH (merchant_id);
    CREATE UNIQUE INDEX rewards_merchant_external_id_key ON rewards (merchant_id, external_id);
    CREATE INDEX rewards_merchant_player_id_idx ON rewards (merchant_id, player_id, id);
  `.execute(db);
  for (let remainder = 0; remainder < rewardPartitions; remainder++) {
    await sql`
      CREATE TABLE ${sql.id(`rewards_p${remainder}`)} PARTITION OF rewards
        FOR VALUES WITH (MODULUS ${sql.lit(rewardPartitions)}, REMAINDER ${sql.lit(remainder)})
        WITH (fillfactor = 45)
    `.execute(db);
  }
  await sql`
    CREATE TABLE players (
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      player_id text NOT NULL CHECK (length(player_id) BETWEEN 1 AND 255),
      username text,
      nickname text,
      first_name text,
      last_name text,
      gender text,
      email text,
      phone text,
      address text,
      city text,
      country text,
      language text,
      test boolean NOT NULL DEFAULT false,
      PRIMARY KEY (merchant_id, player_id)
    );

    CREATE TABLE wallets (
      merchant_id uuid NOT NULL,
      player_id text NOT NULL,
      currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      balance numeric NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, player_id, currency),
      FOREIGN KEY (merchant_id, player_id) REFERENCES players (merchant_id, player_id)
    );

    CREATE TABLE sessions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      merchant_id uuid NOT NULL,
      token_digest bytea NOT NULL,
      player_id text NOT NULL,
      currency char(3) NOT NULL,
      expires_at timestamptz,
      ip_address text,
      device_platform text,
      bet_slip_json json NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT sessions_token_digest_key UNIQUE (merchant_id, token_digest),
      FOREIGN KEY (merchant_id, player_id, currency) REFERENCES wallets (merchant_id, player_id, currency)
    );
    CREATE INDEX sessions_expires_at_idx ON sessions (expires_at) WHERE expires_at IS NOT NULL;

    CREATE TABLE bet_slip_items (
      session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      position integer NOT NULL,
      sport_id text NOT NULL,
      sport_name text NOT NULL,
      bet_slip_id text,
      match_name text NOT NULL,
      match_id text NOT NULL,
      competition_id text NOT NULL,
      competition_name text NOT NULL,
      market_id text NOT NULL,
      market_name text NOT NULL,
      market_option_id text NOT NULL,
      market_option_name text NOT NULL,
      odd double precision NOT NULL,
      margin double precision,
      home_team text NOT NULL,
      away_team text NOT NULL,
      PRIMARY KEY (session_id, position)
    );

    CREATE TABLE cancellation_jobs (
      id uuid NOT NULL,
      merchant_id uuid NOT NULL,
      operation job_operation NOT NULL,
      state job_state NOT NULL,
      request_id text,
      requested integer,
      cancelled integer,
      already_cancelled integer,
      not_cancellable integer,
      not_found integer,
      players integer,
      outcome cancel_outcome,
      reward_id uuid,
      error text,
      attempts smallint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz,
      PRIMARY KEY (merchant_id, id)
    );
    CREATE INDEX cancellation_jobs_finished_at_idx ON cancellation_jobs (finished_at) WHERE finished_at IS NOT NULL;

    CREATE TABLE job_rewards (
      merchant_id uuid NOT NULL,
      job_id uuid NOT NULL,
      bucket smallint NOT NULL CHECK (bucket BETWEEN -1 AND 255),
      first_id uuid NOT NULL,
      reward_ids uuid[] NOT NULL,
      PRIMARY KEY (merchant_id, job_id, bucket, first_id)
    );

    CREATE TABLE job_cancel_slices (
      id bigint GENERATED ALWAYS AS IDENTITY,
      merchant_id uuid NOT NULL,
      job_id uuid NOT NULL,
      cancelled_at timestamptz NOT NULL,
      player_ids text[] NOT NULL,
      PRIMARY KEY (merchant_id, job_id, id)
    );

    CREATE TABLE merchant_webhooks (
      merchant_id uuid PRIMARY KEY REFERENCES merchants (id) ON DELETE CASCADE,
      url text NOT NULL,
      events text[] NOT NULL CHECK (cardinality(events) > 0),
      secret text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      failing_since timestamptz,
      disabled_at timestamptz,
      disabled_reason text
    );

    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
      type text NOT NULL,
      job_id text NOT NULL,
      payload json NOT NULL,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed', 'dropped')),
      attempts integer NOT NULL DEFAULT 0,
      last_status integer,
      last_error text,
      next_attempt_at timestamptz,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_deliveries_merchant_created ON webhook_deliveries (merchant_id, created_at DESC);
    CREATE INDEX webhook_deliveries_created_at_idx ON webhook_deliveries (created_at);
  `.execute(db);
}
