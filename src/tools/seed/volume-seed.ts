import { randomBytes, randomUUID } from 'node:crypto';
import { type RawBuilder, sql, type Transaction } from 'kysely';
import { type BetSlipItemInput, betSlipJson } from '../../api/bet-slip/bet-slip-json.js';
import { digestSessionToken, generateSessionToken } from '../../api/bet-slip/session-token.js';
import type { Db } from '../../shared/db/client.js';
import type { Database } from '../../shared/db/schema.js';
import type { SecretSealer } from '../../shared/secrets/secret-sealer.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { VolumeSeedOptions } from './seed-options.js';
import type { SeededMerchant, SeedReport, SeedTotals } from './seed-report.js';

/**
 * Generated volumes for trying the service out at scale and for benchmarks. Every table is filled by
 * `INSERT … SELECT … FROM generate_series(…)`: Postgres makes the rows, Node sends a few dozen
 * statements whatever the volume. All of it is one transaction, so a failed run leaves nothing behind.
 */

/** Rewards per INSERT: large enough that statement overhead vanishes, small enough to log progress. */
const REWARDS_PER_STATEMENT = 100_000;
/** Session tokens are made in Node (they must be returned), and sent as one array per statement. */
const SESSIONS_PER_STATEMENT = 10_000;
/** Seeded sessions stay valid through a benchmark or a soak of any realistic length. */
const SESSION_LIFETIME = '30 days';
/** Seeded configurations end a year from today: active all through a benchmark or a soak. */
const CONFIGURATION_RUNS_FOR = '365 days';

type Trx = Transaction<Database>;

interface MerchantRow {
  id: string;
  name: string;
  secret_key: string;
}

export interface VolumeSeedTuning {
  logger?: Logger;
  /** Rewards per INSERT statement (default 100,000); tests lower it to cross statement boundaries. */
  rewardsPerStatement?: number;
}

export async function seedVolume(
  db: Db,
  secrets: SecretSealer,
  options: VolumeSeedOptions,
  tuning: VolumeSeedTuning = {},
): Promise<SeedReport> {
  const started = performance.now();
  const totals: SeedTotals = { configurations: 0, players: 0, rewards: 0, sessions: 0 };

  const merchants = await db.transaction().execute(async (trx) => {
    const rows = await insertMerchants(trx, secrets, options.merchants);
    const seeded: SeededMerchant[] = [];
    for (const merchant of rows) {
      seeded.push(await seedMerchant(trx, merchant, options, totals, tuning));
    }
    return seeded;
  });

  // Fresh statistics, so the first queries after a large load get the plans they would get in production.
  await sql`
    ANALYZE merchants, reward_configurations, game_reward_configurations, bet_constraints,
      players, wallets, rewards, sessions, bet_slip_items
  `.execute(db);

  return { merchants, totals, ms: Math.round(performance.now() - started) };
}

/** Ids are made here, so that each secret is sealed for its merchant; the report carries the plain secrets. */
async function insertMerchants(trx: Trx, sealer: SecretSealer, count: number): Promise<MerchantRow[]> {
  const width = Math.max(3, String(count).length);
  const rows: MerchantRow[] = Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    name: `Seed Merchant ${String(i + 1).padStart(width, '0')}`,
    secret_key: randomBytes(32).toString('base64url'),
  }));
  const ids = rows.map((row) => row.id);
  const names = rows.map((row) => row.name);
  const sealed = rows.map((row) => sealer.seal(row.secret_key, row.id, 'merchants.secret_key'));
  await sql`
    INSERT INTO merchants (id, name, secret_key)
    SELECT id, name, secret FROM unnest(${ids}::uuid[], ${names}::text[], ${sealed}::text[]) AS m(id, name, secret)
  `.execute(trx);
  return rows.sort((a, b) => a.name.localeCompare(b.name));
}

async function seedMerchant(
  trx: Trx,
  merchant: MerchantRow,
  options: VolumeSeedOptions,
  totals: SeedTotals,
  tuning: VolumeSeedTuning,
): Promise<SeededMerchant> {
  const log = tuning.logger?.child({ merchantId: merchant.id });
  const configurationIds = await insertConfigurations(trx, merchant.id, options);
  totals.configurations += configurationIds.length;

  const width = playerIdWidth(options.players);
  totals.players += await insertPlayers(trx, merchant.id, options.players, width);
  log?.info({ configurations: configurationIds.length, players: options.players }, 'configurations and players loaded');

  const rewardsPerStatement = tuning.rewardsPerStatement ?? REWARDS_PER_STATEMENT;
  const playersPerStatement = Math.max(1, Math.floor(rewardsPerStatement / Math.max(1, options.rewardsPerPlayer)));
  for (let first = 1; options.rewardsPerPlayer > 0 && first <= options.players; first += playersPerStatement) {
    const last = Math.min(options.players, first + playersPerStatement - 1);
    totals.rewards += await insertRewards(trx, merchant.id, configurationIds, { first, last, width }, options);
    log?.info({ rewards: totals.rewards }, 'rewards loaded');
  }

  const sessionTokens = await insertSessions(trx, merchant.id, options, width);
  totals.sessions += sessionTokens.length;

  const samples = await sql<{ id: string }>`
    SELECT id FROM rewards
    WHERE merchant_id = ${merchant.id} AND status = 'ACTIVE'
    ORDER BY player_id, id
    LIMIT 5
  `.execute(trx);

  return {
    id: merchant.id,
    name: merchant.name,
    secretKey: merchant.secret_key,
    configurationIds,
    playerIds: {
      first: options.players > 0 ? playerId(1, width) : null,
      last: options.players > 0 ? playerId(options.players, width) : null,
      count: options.players,
    },
    sampleRewardIds: samples.rows.map((row) => row.id),
    sessionTokens,
  };
}

/** `player-000001`: zero-padded, so that ids sort in creation order. */
function playerIdWidth(players: number): number {
  return Math.max(6, String(players).length);
}

function playerId(n: number, width: number): string {
  return `player-${String(n).padStart(width, '0')}`;
}

/** The SQL twin of `playerId`, for a number made by generate_series. */
function playerIdSql(n: RawBuilder<unknown>, width: number): RawBuilder<string> {
  return sql<string>`'player-' || lpad((${n})::text, ${width}::int, '0')`;
}

async function insertConfigurations(trx: Trx, merchantId: string, options: VolumeSeedOptions): Promise<string[]> {
  if (options.configurations === 0) return [];
  const width = Math.max(4, String(options.configurations).length);
  // Every fifth configuration INACTIVE; start dates a day apart, so readAll's order is easy to follow.
  const created = await sql<{ id: string; external_id: string }>`
    INSERT INTO reward_configurations (
      merchant_id, external_id, name, status, reward_type, number_of_free_bets,
      start_date, end_date, duration_minutes
    )
    SELECT
      ${merchantId}::uuid,
      'cfg-' || lpad(n::text, ${width}::int, '0'),
      'Seed configuration ' || lpad(n::text, ${width}::int, '0'),
      CASE WHEN n % 5 = 0 THEN 'INACTIVE' ELSE 'ACTIVE' END,
      'FREE_BET',
      1 + n % 20,
      date_trunc('day', now()) - make_interval(days => n),
      date_trunc('day', now()) + ${CONFIGURATION_RUNS_FOR}::interval,
      60 * (1 + n % 48)
    FROM generate_series(1, ${options.configurations}::int) AS n
    RETURNING id, external_id
  `.execute(trx);
  const ids = created.rows.sort((a, b) => a.external_id.localeCompare(b.external_id)).map((row) => row.id);

  if (options.gamesPerConfiguration > 0) {
    await sql`
      INSERT INTO game_reward_configurations (reward_configuration_id, game_id)
      SELECT rc.id, 1000 + g
      FROM unnest(${ids}::uuid[]) AS rc(id)
      CROSS JOIN generate_series(1, ${options.gamesPerConfiguration}::int) AS g
    `.execute(trx);
    // Two currencies per game, amounts with cents (0.10 … 1.00; 250.50), as numeric end to end.
    await sql`
      INSERT INTO bet_constraints (game_reward_configuration_id, currency, bet_amount, max_win_per_bet)
      SELECT g.id, c.currency, round(0.10 * (1 + g.game_id % 10) * c.factor, 2), round(250.50 * c.factor, 2)
      FROM game_reward_configurations g
      CROSS JOIN (VALUES ('EUR', 1.0), ('USD', 1.1)) AS c(currency, factor)
      WHERE g.reward_configuration_id = ANY(${ids}::uuid[])
    `.execute(trx);
  }
  return ids;
}

async function insertPlayers(trx: Trx, merchantId: string, players: number, width: number): Promise<number> {
  if (players === 0) return 0;
  const id = playerIdSql(sql.ref('n'), width);
  const inserted = await sql`
    INSERT INTO players (
      merchant_id, player_id, username, nickname, first_name, last_name, gender, email, phone,
      address, city, country, language, test
    )
    SELECT
      ${merchantId}::uuid,
      ${id},
      'user' || n,
      'Player ' || n,
      (ARRAY['Alice', 'Bob', 'Carla', 'Dmitri', 'Eva', 'Farid', 'Greta', 'Hugo'])[1 + n % 8],
      (ARRAY['Martin', 'Smith', 'Rossi', 'Ivanov', 'Novak', 'Haddad', 'Berg', 'Silva'])[1 + (n / 8) % 8],
      CASE WHEN n % 2 = 0 THEN 'M' ELSE 'F' END,
      ${id} || '@example.com',
      '+3569' || lpad(n::text, 7, '0'),
      n || ' Seed Street',
      (ARRAY['Valletta', 'Berlin', 'Roma', 'Madrid'])[1 + n % 4],
      (ARRAY['MT', 'DE', 'IT', 'ES'])[1 + n % 4],
      'ENG',
      n % 100 = 0
    FROM generate_series(1, ${players}::int) AS n
  `.execute(trx);
  // One wallet per player; odd players play in EUR, even ones in USD.
  await sql`
    INSERT INTO wallets (merchant_id, player_id, currency, balance)
    SELECT ${merchantId}::uuid, ${id}, CASE WHEN n % 2 = 1 THEN 'EUR' ELSE 'USD' END, round(10 + (n * 7919 % 100000) / 100.0, 2)
    FROM generate_series(1, ${players}::int) AS n
  `.execute(trx);
  return Number(inserted.numAffectedRows ?? 0n);
}

async function insertRewards(
  trx: Trx,
  merchantId: string,
  configurationIds: readonly string[],
  players: { first: number; last: number; width: number },
  options: VolumeSeedOptions,
): Promise<number> {
  const perPlayer = options.rewardsPerPlayer;
  // One series over the merchant's reward numbers i (player i / perPlayer + 1, reward i % perPlayer + 1)
  // makes rows in player order. Two nested series were planned the other way round, scattering the
  // index inserts: much slower (2.4x, measured 2026-11-20). With --status-mix, of every 20 consecutive rewards two are USED and
  // one EXPIRED (exactly 10 % and 5 % when the total is a multiple of 20).
  const id = playerIdSql(sql`i / ${perPlayer}::int + 1`, players.width);
  const inserted = await sql`
    INSERT INTO rewards (merchant_id, external_id, player_id, reward_configuration_id, status)
    SELECT
      ${merchantId}::uuid,
      'r-' || pl.id || '-' || (i % ${perPlayer}::int + 1),
      pl.id,
      (${configurationIds}::uuid[])[1 + (i / ${perPlayer}::int + i) % ${configurationIds.length}::int],
      CASE
        WHEN NOT ${options.statusMix}::boolean THEN 'ACTIVE'
        WHEN i % 20 < 2 THEN 'USED'
        WHEN i % 20 = 2 THEN 'EXPIRED'
        ELSE 'ACTIVE'
      END
    FROM generate_series(
      (${players.first}::bigint - 1) * ${perPlayer}::int,
      ${players.last}::bigint * ${perPlayer}::int - 1
    ) AS i
    CROSS JOIN LATERAL (SELECT ${id} AS id) AS pl
  `.execute(trx);
  return Number(inserted.numAffectedRows ?? 0n);
}

/**
 * Session s belongs to player ((s - 1) mod players) + 1, in that player's wallet currency. Only the
 * tokens' digests are stored; the tokens themselves exist only in the returned report. Session ids
 * are made here too, as each session's bet slip JSON (written with it, as the API writes it) names it.
 */
async function insertSessions(trx: Trx, merchantId: string, options: VolumeSeedOptions, width: number) {
  const tokens: string[] = [];
  for (let offset = 0; offset < options.sessions; offset += SESSIONS_PER_STATEMENT) {
    const batch = Array.from({ length: Math.min(SESSIONS_PER_STATEMENT, options.sessions - offset) }, () =>
      generateSessionToken(),
    );
    const ids = batch.map(() => randomUUID());
    const betSlips = ids.map((id) => betSlipJson(seedBetSlip(id, options.betSlipItems)));
    const owner = playerIdSql(sql`1 + (${offset}::int + d.ord - 1) % ${options.players}::int`, width);
    const created = await sql<{ id: string }>`
      INSERT INTO sessions (
        id, merchant_id, token_digest, player_id, currency, expires_at, ip_address, device_platform, bet_slip_json
      )
      SELECT
        d.id, w.merchant_id, d.digest, w.player_id, w.currency,
        now() + ${SESSION_LIFETIME}::interval,
        '198.51.100.' || (1 + d.ord % 254),
        CASE WHEN d.ord % 2 = 0 THEN 'mobile' ELSE 'desktop' END,
        d.bet_slip_json
      FROM unnest(${ids}::uuid[], ${batch.map(digestSessionToken)}::bytea[], ${betSlips}::json[])
        WITH ORDINALITY AS d(id, digest, bet_slip_json, ord)
      JOIN wallets w ON w.merchant_id = ${merchantId}::uuid AND w.player_id = ${owner}
      RETURNING id
    `.execute(trx);
    if (created.rows.length !== batch.length) {
      throw new Error(`expected ${batch.length} sessions, inserted ${created.rows.length}`);
    }
    if (options.betSlipItems > 0) await insertBetSlipItems(trx, ids);
    tokens.push(...batch);
  }
  return tokens;
}

/** Every third item is a market without a margin (null), the others an over/under line. */
function seedBetSlip(sessionId: string, items: number): BetSlipItemInput[] {
  return Array.from({ length: items }, (_, index) => {
    const i = index + 1;
    const withoutMargin = i % 3 === 1;
    return {
      sportId: 'football',
      sportName: 'Football',
      betSlipId: `slip-${sessionId.slice(0, 8)}`,
      matchName: `Home ${i} vs Away ${i}`,
      matchId: `match-${i}`,
      competitionId: 'comp-seed',
      competitionName: 'Seed League',
      marketId: withoutMargin ? 'market-1x2' : 'market-total-goals',
      marketName: withoutMargin ? 'Match result' : 'Total goals over/under',
      marketOptionId: `option-${i}`,
      marketOptionName: withoutMargin ? `Home ${i}` : 'Over 2.5',
      // Tenths as integers first, so that 1.5 + 0.1 lands on the double nearest 1.6.
      odd: (15 + (i % 10)) / 10,
      margin: withoutMargin ? null : 2.5,
      homeTeam: `Home ${i}`,
      awayTeam: `Away ${i}`,
    };
  });
}

/**
 * The sessions' `bet_slip_items` rows, read by Postgres out of the JSON just written with them: one
 * statement, and the items defined once (seedBetSlip).
 */
async function insertBetSlipItems(trx: Trx, sessionIds: readonly string[]): Promise<void> {
  await sql`
    INSERT INTO bet_slip_items (
      session_id, position, sport_id, sport_name, bet_slip_id, match_name, match_id, competition_id,
      competition_name, market_id, market_name, market_option_id, market_option_name, odd, margin,
      home_team, away_team
    )
    SELECT
      s.id, i.ord - 1, i.item->>'sportId', i.item->>'sportName', i.item->>'betSlipId', i.item->>'matchName',
      i.item->>'matchId', i.item->>'competitionId', i.item->>'competitionName', i.item->>'marketId',
      i.item->>'marketName', i.item->>'marketOptionId', i.item->>'marketOptionName',
      (i.item->>'odd')::double precision, (i.item->>'margin')::double precision,
      i.item->>'homeTeam', i.item->>'awayTeam'
    FROM sessions s
    CROSS JOIN json_array_elements(s.bet_slip_json) WITH ORDINALITY AS i(item, ord)
    WHERE s.id = ANY(${sessionIds}::uuid[])
  `.execute(trx);
}
