import { type Insertable, sql, type Transaction } from 'kysely';
import type { BetSlipItemsTable, Database, PlayersTable } from '../../shared/db/schema.js';
import { type BetSlipItemInput, betSlipJson } from './bet-slip-json.js';
import { digestSessionToken } from './session-token.js';

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
