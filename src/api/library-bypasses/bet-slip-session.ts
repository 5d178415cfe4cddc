import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/schema.js';
import { betSlipAnswerFields } from '../bet-slip/bet-slip-answer-fields.js';
import { digestSessionToken } from '../bet-slip/session-token.js';
import { type PreparedStatement, queryPrepared } from './prepared-statement.js';

/** What /betSlip answers from, for one session: its own fields, the fresh wallet balance, the player's profile. */
export interface BetSlipSession {
  expiresAt: Date | null;
  playerId: string;
  /** The wallet balance in the session's currency, as Postgres writes the numeric: exact. */
  balance: string;
  currency: string;
  /**
   * The answer's profile members (those `from: 'profile'` in bet-slip-answer-fields.ts, the player's
   * profile and the session's `ipAddress` and `devicePlatform`) as JSON members, each led by a comma, in
   * the answer's order, those unknown left out, `language` ENG when unknown.
   */
  profileJson: string;
  test: boolean | null;
  /** The bet slip items as the answer's JSON array, written with the session (src/api/bet-slip/bet-slip-json.ts). */
  betSlipJson: string;
}

/**
 * The profile members as one text, spelled once at module load from the answer's definition
 * (bet-slip-answer-fields.ts), so that the statement's text stays constant: `to_json` of each text is its
 * JSON string, and a NULL member drops out of `concat`.
 */
const PROFILE_JSON = `concat(\n${betSlipAnswerFields
  .flatMap(([name, field]) =>
    field.from === 'profile' ? [`      ',${JSON.stringify(name)}:' || to_json(${field.sql})::text`] : [],
  )
  .join(',\n')}\n    )`;

/**
 * One indexed lookup by merchant and token digest (the unique key `(merchant_id, token_digest)`: a token
 * of another merchant is not found, as an unknown one), joining only what
 * may change after the session was created: the wallet (its balance must be fresh) and the player (a
 * later session may update the profile). The items' JSON was written with the session; the profile's
 * members come as one text (PROFILE_JSON): node-postgres describes, parses and copies every column of
 * every row, and at twenty columns that was the largest cost of the route's own after the socket
 * writes. The answer is put together in Node (bet-slip-answer.ts). A constant text, compiled once
 * rather than by the query builder on every request, and planned once per connection (a prepared
 * statement: planning this join costs more than running it), run straight on the pool
 * (prepared-statement.ts).
 *
 * Two steps around the libraries, measured on Node 24: the library's way for the answer
 * (every column selected, the answer written by `c.json`) cost +24 % CPU per /betSlip answer; the
 * library's way for the statement (this lookup built by Kysely and sent unnamed) +67 %.
 *
 * The wallet and the player are read by their primary keys once the session is found, whatever the
 * tables' statistics say: `OFFSET 0` keeps each lateral subquery from being flattened into a join the
 * planner may order otherwise. With few sessions (a new deployment, the benchmark's five) it chose a
 * scan of the merchant's whole wallets index merged with the sorted sessions, about a fifth more
 * Postgres time per answer than the three key lookups (pgbench, 2026-11-25).
 */
const FIND_BET_SLIP_SESSION: PreparedStatement = {
  name: 'find-bet-slip-session',
  text: `
  SELECT
    s.expires_at AS "expiresAt", s.player_id AS "playerId", w.balance, s.currency,
    ${PROFILE_JSON} AS "profileJson",
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
};

export async function findBetSlipSession(
  db: Kysely<Database>,
  merchantId: string,
  token: string,
): Promise<BetSlipSession | undefined> {
  const rows = await queryPrepared<BetSlipSession>(db, FIND_BET_SLIP_SESSION, [merchantId, digestSessionToken(token)]);
  return rows[0];
}
