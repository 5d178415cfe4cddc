import { type Kysely, sql } from 'kysely';

/**
 * Frozen in time: later changes get a migration of their own.
 *
 * Index choices for the cancel paths (PERFORMANCE.md):
 * - No index mentions `status`, `cancelled_at` or `cancellation_job_id`, the columns a cancel writes,
 *   so a cancel can be a HOT update (no index maintenance). A partial index on `status = 'ACTIVE'`
 *   would help one big UPDATE but blocks HOT and slows chunked cancels by ~40 %.
 * - `fillfactor = 85` leaves room on each page for the new row versions HOT updates write there
 *   (lowered to 50 by a later migration, after measuring).
 * - `(merchant_id, player_id, id)` serves the keyset walk of bulkCancelByQuery; `(merchant_id,
 *   external_id)` is both the uniqueness rule and the lookup of cancels by external id.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE merchants (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
      secret_key text NOT NULL,
      previous_secret_key text,
      previous_secret_valid_until timestamptz,
      status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'DISABLED')),
      allowed_ips text[],
      rate_limit_per_second integer CHECK (rate_limit_per_second > 0),
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
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      merchant_id uuid NOT NULL REFERENCES merchants (id),
      external_id text CHECK (length(external_id) BETWEEN 1 AND 255),
      player_id text NOT NULL CHECK (length(player_id) BETWEEN 1 AND 255),
      reward_configuration_id uuid NOT NULL REFERENCES reward_configurations (id),
      status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'USED', 'EXPIRED', 'CANCELLED')),
      cancelled_at timestamptz,
      cancellation_job_id text,
      created_at timestamptz NOT NULL DEFAULT now()
    ) WITH (fillfactor = 85);
    CREATE UNIQUE INDEX rewards_merchant_external_id_key ON rewards (merchant_id, external_id);
    CREATE INDEX rewards_merchant_player_id_idx ON rewards (merchant_id, player_id, id);

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
      token_digest bytea NOT NULL UNIQUE,
      player_id text NOT NULL,
      currency char(3) NOT NULL,
      expires_at timestamptz,
      ip_address text,
      device_platform text,
      created_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (merchant_id, player_id, currency) REFERENCES wallets (merchant_id, player_id, currency)
    );

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
      id text PRIMARY KEY,
      merchant_id uuid NOT NULL,
      operation text NOT NULL,
      state text NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'failed')),
      request_id text,
      requested integer,
      cancelled integer,
      already_cancelled integer,
      not_cancellable integer,
      not_found integer,
      players integer,
      error text,
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX cancellation_jobs_merchant_created_idx ON cancellation_jobs (merchant_id, created_at DESC);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE cancellation_jobs, bet_slip_items, sessions, wallets, players, rewards,
      bet_constraints, game_reward_configurations, reward_configurations, merchants;
  `.execute(db);
}
