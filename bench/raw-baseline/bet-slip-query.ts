import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * The whole /betSlip answer of one session, written by Postgres in one indexed lookup (the unique
 * index on `sessions.token_digest`): the player, wallet and session fields, then the bet slip items
 * in order. Not the service's query, but the same rows and about the same bytes (~2 KB for 10
 * items), so that what the service adds on top of it shows. json_strip_nulls leaves out the
 * fields that are unknown, as the API does, and writes the text compactly (json_build_object's has
 * a space around every colon). A session of another merchant, or an expired one, is not found.
 */
const BET_SLIP_SQL = `
  SELECT json_strip_nulls(json_build_object(
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
    'language', p.language,
    'devicePlatform', s.device_platform,
    'address', p.address,
    'city', p.city,
    'country', p.country,
    'test', p.test,
    'errorCode', 0,
    'errorMessage', '',
    'betSlip', coalesce((
      SELECT json_agg(json_build_object(
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
      ) ORDER BY b.position)
      FROM bet_slip_items b
      WHERE b.session_id = s.id
    ), '[]'::json)
  ))::text AS body
  FROM sessions s
  JOIN wallets w ON (w.merchant_id, w.player_id, w.currency) = (s.merchant_id, s.player_id, s.currency)
  LEFT JOIN players p ON (p.merchant_id, p.player_id) = (s.merchant_id, s.player_id)
  WHERE s.token_digest = $1
    AND s.merchant_id = $2
    AND (s.expires_at IS NULL OR s.expires_at > now())
`;

/** The JSON text of the session's bet slip, or undefined when the token names no live session of the merchant. */
export async function findBetSlipBody(pool: pg.Pool, merchantId: string, token: string): Promise<string | undefined> {
  // Tokens are stored as their SHA-256 digest (docs/design.md §8).
  const digest = createHash('sha256').update(token, 'utf8').digest();
  const { rows } = await pool.query<{ body: string }>(BET_SLIP_SQL, [digest, merchantId]);
  return rows[0]?.body;
}
