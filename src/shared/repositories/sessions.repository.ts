import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { digestSessionToken } from '../session-token.js';

export interface BetSlipLookup {
  merchantId: string;
  expiresAt: Date | null;
  /** The response object without `betSlip`, as JSON text, optional fields that are unknown left out. */
  playerJson: string;
  /** The bet slip items in stored order, as JSON text. */
  betSlipJson: string;
}

/**
 * One indexed lookup by token digest. Postgres writes the JSON so that `balance` (numeric) reaches
 * the client exactly as stored. Optional player fields that are NULL are stripped; `margin` is kept
 * as null on purpose, so items are built apart from the stripped object.
 */
export async function findBetSlipByToken(db: Kysely<Database>, token: string): Promise<BetSlipLookup | undefined> {
  const result = await sql<BetSlipLookup>`
    SELECT
      s.merchant_id AS "merchantId",
      s.expires_at AS "expiresAt",
      json_strip_nulls(json_build_object(
        'playerId', s.player_id,
        'balance', w.balance,
        'currency', s.currency,
        'username', p.username,
        'nickname', p.nickname,
        'firstName', p.first_name,
        'lastName', p.last_name,
        'gender', p.gender,
        'email', p.email,
        'phone', p.phone,
        'ipAddress', s.ip_address,
        'language', coalesce(p.language, 'ENG'),
        'devicePlatform', s.device_platform,
        'address', p.address,
        'city', p.city,
        'country', p.country,
        'test', coalesce(p.test, false),
        'errorCode', 0,
        'errorMessage', ''
      ))::text AS "playerJson",
      (
        SELECT coalesce(json_agg(
          json_build_object(
            'sportId', b.sport_id,
            'sportName', b.sport_name,
            'betSlipId', b.bet_slip_id,
            'matchName', b.match_name,
            'matchId', b.match_id,
            'competitionId', b.competition_id,
            'competitionName', b.competition_name,
            'marketId', b.market_id,
            'marketName', b.market_name,
            'marketOptionId', b.market_option_id,
            'marketOptionName', b.market_option_name,
            'odd', b.odd,
            'margin', b.margin,
            'homeTeam', b.home_team,
            'awayTeam', b.away_team
          ) ORDER BY b.position
        ), '[]'::json)
        FROM bet_slip_items b
        WHERE b.session_id = s.id
      )::text AS "betSlipJson"
    FROM sessions s
    JOIN wallets w ON w.merchant_id = s.merchant_id AND w.player_id = s.player_id AND w.currency = s.currency
    LEFT JOIN players p ON p.merchant_id = s.merchant_id AND p.player_id = s.player_id
    WHERE s.token_digest = ${digestSessionToken(token)}
  `.execute(db);
  return result.rows[0];
}
