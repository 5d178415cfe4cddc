import { type Insertable, type Kysely, sql, type Transaction } from 'kysely';
import { type BetSlipItemInput, betSlipJson } from '../bet-slip-json.js';
import { preparedStatement, queryPrepared } from '../db/client.js';
import type { BetSlipItemsTable, Database, PlayersTable } from '../db/schema.js';
import { digestSessionToken } from '../session-token.js';

/** What /betSlip answers from, for one session: its own fields, the fresh wallet balance, the player's profile. */
export interface BetSlipSession {
  expiresAt: Date | null;
  playerId: string;
  /** The wallet balance in the session's currency, as Postgres writes the numeric: exact. */
  balance: string;
  currency: string;
  /**
   * The answer's fields from `username` to `country` as JSON members, each led by a comma, in the
   * interface's order: the player's profile and the session's `ipAddress` and `devicePlatform`, those
   * unknown left out, `language` ENG when unknown.
   */
  profileJson: string;
  test: boolean | null;
  /** The bet slip items as the answer's JSON array, written with the session (src/shared/bet-slip-json.ts). */
  betSlipJson: string;
}

/**
 * One indexed lookup by merchant and token digest (the unique key `(merchant_id, token_digest)`: a token
 * of another merchant is not found, as an unknown one), joining only what
 * may change after the session was created: the wallet (its balance must be fresh) and the player (a
 * later session may update the profile). The items' JSON was written with the session; the profile's
 * thirteen optional members come as one text (`to_json` of each text is its JSON string, a NULL member
 * drops out of `concat`): node-postgres describes, parses and copies every column of every row, and at
 * twenty columns that was the largest cost of the route's own after the socket writes. The answer is put
 * together in Node (src/api/bet-slip-answer.ts). A constant text, compiled once rather than by the query
 * builder on every request, and planned once per connection (a prepared statement: planning this join
 * costs more than running it), run straight on the pool (`queryPrepared`).
 *
 * The wallet and the player are read by their primary keys once the session is found, whatever the
 * tables' statistics say: `OFFSET 0` keeps each lateral subquery from being flattened into a join the
 * planner may order otherwise. With few sessions (a new deployment, the benchmark's five) it chose a
 * scan of the merchant's whole wallets index merged with the sorted sessions, about a fifth more
 * Postgres time per answer than the three key lookups (pgbench, 2026-11-25).
 */
const FIND_BET_SLIP_SESSION = preparedStatement(
  'find-bet-slip-session',
  `
  SELECT
    s.expires_at AS "expiresAt", s.player_id AS "playerId", w.balance, s.currency,
    concat(
      ',"username":' || to_json(p.username)::text,
      ',"nickname":' || to_json(p.nickname)::text,
      ',"firstName":' || to_json(p.first_name)::text,
      ',"lastName":' || to_json(p.last_name)::text,
      ',"gender":' || to_json(p.gender)::text,
      ',"email":' || to_json(p.email)::text,
      ',"phone":' || to_json(p.phone)::text,
      ',"ipAddress":' || to_json(s.ip_address)::text,
      ',"language":' || to_json(coalesce(p.language, 'ENG'))::text,
      ',"devicePlatform":' || to_json(s.device_platform)::text,
      ',"address":' || to_json(p.address)::text,
      ',"city":' || to_json(p.city)::text,
      ',"country":' || to_json(p.country)::text
    ) AS "profileJson",
    p.test, s.bet_slip_json::text AS "betSlipJson"
  FROM sessions s
  CROSS JOIN LATERAL (
    SELECT balance FROM wallets
    WHERE merchant_id = s.merchant_id AND player_id = s.player_id AND currency = s.currency
    OFFSET 0
  ) w
  LEFT JOIN LATERAL (
    SELECT * FROM players WHERE merchant_id = s.merchant_id AND player_id = s.player_id OFFSET 0
  ) p ON true
  WHERE s.merchant_id = $1 AND s.token_digest = $2
`,
);

export async function findBetSlipSession(
  db: Kysely<Database>,
  merchantId: string,
  token: string,
): Promise<BetSlipSession | undefined> {
  const rows = await queryPrepared<BetSlipSession>(db, FIND_BET_SLIP_SESSION, [merchantId, digestSessionToken(token)]);
  return rows[0];
}

/** Player profile fields: absent (undefined) keeps what is stored, null clears it. */
export type PlayerProfile = Partial<Omit<PlayersTable, 'merchant_id' | 'player_id' | 'test'>> & { test?: boolean };

export interface NewSession {
  merchantId: string;
  playerId: string;
  /** The clear token; only its digest is stored. */
  token: string;
  currency: string;
  /** Decimal text. */
  balance: string;
  expiresAt: Date | null;
  ipAddress: string | null;
  devicePlatform: string | null;
  player: PlayerProfile;
  betSlip: readonly BetSlipItemInput[];
}

/** Name of the unique constraint on a merchant's token digests. */
export const SESSION_TOKEN_DIGEST_KEY = 'sessions_token_digest_key';

/**
 * Everything /betSlip reads for one session, written in the caller's transaction: the player
 * (created, or its given fields updated), the wallet in the session's currency (its balance set),
 * the session (with its items' JSON, /betSlip's part that never changes), and its bet slip items in
 * order. One statement each.
 */
export async function insertSession(trx: Transaction<Database>, session: NewSession): Promise<void> {
  const { merchantId, playerId } = session;
  const profile = Object.fromEntries(Object.entries(session.player).filter(([, value]) => value !== undefined));
  await trx
    .insertInto('players')
    .values({ ...profile, merchant_id: merchantId, player_id: playerId })
    .onConflict((oc) =>
      Object.keys(profile).length === 0
        ? oc.columns(['merchant_id', 'player_id']).doNothing()
        : oc.columns(['merchant_id', 'player_id']).doUpdateSet(profile),
    )
    .execute();

  await trx
    .insertInto('wallets')
    .values({ merchant_id: merchantId, player_id: playerId, currency: session.currency, balance: session.balance })
    .onConflict((oc) =>
      oc
        .columns(['merchant_id', 'player_id', 'currency'])
        .doUpdateSet((eb) => ({ balance: eb.ref('excluded.balance'), updated_at: sql<Date>`now()` })),
    )
    .execute();

  const { id: sessionId } = await trx
    .insertInto('sessions')
    .values({
      merchant_id: merchantId,
      token_digest: digestSessionToken(session.token),
      player_id: playerId,
      currency: session.currency,
      expires_at: session.expiresAt,
      ip_address: session.ipAddress,
      device_platform: session.devicePlatform,
      bet_slip_json: betSlipJson(session.betSlip),
    })
    .returning('id')
    .executeTakeFirstOrThrow();

  if (session.betSlip.length === 0) return;
  await trx
    .insertInto('bet_slip_items')
    .values(session.betSlip.map((bet, position) => betSlipItemRow(sessionId, bet, position)))
    .execute();
}

/** One bet slip item as a row of `bet_slip_items`: the one place its columns are mapped. */
export function betSlipItemRow(
  sessionId: string,
  bet: BetSlipItemInput,
  position: number,
): Insertable<BetSlipItemsTable> {
  return {
    session_id: sessionId,
    position,
    sport_id: bet.sportId,
    sport_name: bet.sportName,
    bet_slip_id: bet.betSlipId,
    match_name: bet.matchName,
    match_id: bet.matchId,
    competition_id: bet.competitionId,
    competition_name: bet.competitionName,
    market_id: bet.marketId,
    market_name: bet.marketName,
    market_option_id: bet.marketOptionId,
    market_option_name: bet.marketOptionName,
    odd: bet.odd,
    margin: bet.margin,
    home_team: bet.homeTeam,
    away_team: bet.awayTeam,
  };
}
