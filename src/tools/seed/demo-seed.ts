import type { InsertResult, Transaction } from 'kysely';
import { betSlipJson } from '../../api/bet-slip/bet-slip-json.js';
import { digestSessionToken } from '../../api/bet-slip/session-token.js';
import { betSlipItemRow } from '../../api/bet-slip/sessions.repository.js';
import type { Db } from '../../shared/db/client.js';
import type { Database } from '../../shared/db/schema.js';
import type { SecretSealer } from '../../shared/secrets/secret-sealer.js';
import {
  DEMO_CANCELLED_AT,
  DEMO_CONFIGURATIONS,
  DEMO_EXPIRED_SESSION_TOKEN,
  DEMO_MERCHANT,
  DEMO_PLAYERS,
  DEMO_REWARDS,
  DEMO_SESSION_TOKEN,
  DEMO_SESSIONS,
} from './demo-data.js';
import type { SeedReport } from './seed-report.js';

/**
 * Loads the demo set (./demo-data.ts) in one transaction. Every row has a fixed key and every insert
 * is ON CONFLICT DO NOTHING, so running it again inserts nothing and leaves changed rows (a reward
 * cancelled through the API, say) as they are. With `reset`, the demo merchant's rows are deleted
 * first in the same transaction, so the set is loaded exactly as written; its cancellation jobs stay
 * (they are the audit trail).
 */
export async function seedDemo(db: Db, secrets: SecretSealer, options: { reset?: boolean } = {}): Promise<SeedReport> {
  const started = performance.now();
  const inserted = await db.transaction().execute(async (trx) => {
    if (options.reset) await deleteDemoMerchant(trx);
    const merchants = await trx
      .insertInto('merchants')
      .values({
        id: DEMO_MERCHANT.id,
        name: DEMO_MERCHANT.name,
        // Sealed like every merchant's (the demo secret itself is public: docs and the banner show it).
        secret_key: secrets.seal(DEMO_MERCHANT.secretKey, DEMO_MERCHANT.id, 'merchants.secret_key'),
      })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();

    const configurations = await trx
      .insertInto('reward_configurations')
      .values(
        DEMO_CONFIGURATIONS.map((configuration) => ({
          id: configuration.id,
          merchant_id: DEMO_MERCHANT.id,
          external_id: configuration.externalId,
          name: configuration.name,
          status: configuration.status,
          reward_type: 'FREE_BET' as const,
          number_of_free_bets: configuration.numberOfFreeBets,
          start_date: configuration.startDate,
          end_date: configuration.endDate,
          duration_minutes: configuration.durationMinutes,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();

    const games = DEMO_CONFIGURATIONS.flatMap((configuration) =>
      configuration.games.map((game) => ({ ...game, configurationId: configuration.id })),
    );
    await trx
      .insertInto('game_reward_configurations')
      .values(
        games.map((game) => ({ id: game.id, reward_configuration_id: game.configurationId, game_id: game.gameId })),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
    await trx
      .insertInto('bet_constraints')
      .values(
        games.flatMap((game) =>
          Object.entries(game.betConstraints).map(([currency, constraint]) => ({
            game_reward_configuration_id: game.id,
            currency,
            bet_amount: constraint.betAmount,
            max_win_per_bet: constraint.maxWinPerBet,
          })),
        ),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();

    const players = await trx
      .insertInto('players')
      .values(
        DEMO_PLAYERS.map(({ wallet: _wallet, playerId, firstName, lastName, ...profile }) => ({
          ...profile,
          merchant_id: DEMO_MERCHANT.id,
          player_id: playerId,
          first_name: firstName,
          last_name: lastName,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    await trx
      .insertInto('wallets')
      .values(
        DEMO_PLAYERS.map((player) => ({
          merchant_id: DEMO_MERCHANT.id,
          player_id: player.playerId,
          currency: player.wallet.currency,
          balance: player.wallet.balance,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();

    const rewards = await trx
      .insertInto('rewards')
      .values(
        DEMO_REWARDS.map((reward) => ({
          id: reward.id,
          merchant_id: DEMO_MERCHANT.id,
          external_id: reward.externalId,
          player_id: reward.playerId,
          reward_configuration_id: reward.configurationId,
          status: reward.status,
          cancelled_at: reward.status === 'CANCELLED' ? DEMO_CANCELLED_AT : null,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();

    const sessions = await trx
      .insertInto('sessions')
      .values(
        DEMO_SESSIONS.map((session) => ({
          id: session.id,
          merchant_id: DEMO_MERCHANT.id,
          token_digest: digestSessionToken(session.token),
          player_id: session.playerId,
          currency: session.currency,
          expires_at: session.expiresAt,
          ip_address: session.ipAddress,
          device_platform: session.devicePlatform,
          bet_slip_json: betSlipJson(session.betSlip),
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    await trx
      .insertInto('bet_slip_items')
      .values(
        DEMO_SESSIONS.flatMap((session) => session.betSlip.map((bet, index) => betSlipItemRow(session.id, bet, index))),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();

    return {
      merchants: rowCount(merchants),
      configurations: rowCount(configurations),
      players: rowCount(players),
      rewards: rowCount(rewards),
      sessions: rowCount(sessions),
    };
  });

  const playerIds = DEMO_PLAYERS.map((player) => player.playerId);
  const sampleRewards = DEMO_REWARDS.filter((reward) => reward.status === 'ACTIVE');
  return {
    merchants: [
      {
        id: DEMO_MERCHANT.id,
        name: DEMO_MERCHANT.name,
        secretKey: DEMO_MERCHANT.secretKey,
        configurationIds: DEMO_CONFIGURATIONS.map((configuration) => configuration.id),
        playerIds: { first: playerIds[0] ?? null, last: playerIds.at(-1) ?? null, count: playerIds.length },
        sampleRewardIds: sampleRewards.map((reward) => reward.id),
        sampleRewardExternalIds: sampleRewards.flatMap((reward) => (reward.externalId ? [reward.externalId] : [])),
        sessionTokens: [DEMO_SESSION_TOKEN],
        expiredSessionTokens: [DEMO_EXPIRED_SESSION_TOKEN],
      },
    ],
    totals: {
      configurations: DEMO_CONFIGURATIONS.length,
      players: DEMO_PLAYERS.length,
      rewards: DEMO_REWARDS.length,
      sessions: DEMO_SESSIONS.length,
    },
    inserted,
    ms: Math.round(performance.now() - started),
  };
}

/** Children before parents; game configurations, bet constraints and bet slip items go by cascade. */
async function deleteDemoMerchant(trx: Transaction<Database>): Promise<void> {
  const merchantId = DEMO_MERCHANT.id;
  await trx.deleteFrom('sessions').where('merchant_id', '=', merchantId).execute();
  await trx.deleteFrom('rewards').where('merchant_id', '=', merchantId).execute();
  await trx.deleteFrom('wallets').where('merchant_id', '=', merchantId).execute();
  await trx.deleteFrom('players').where('merchant_id', '=', merchantId).execute();
  await trx.deleteFrom('reward_configurations').where('merchant_id', '=', merchantId).execute();
  await trx.deleteFrom('merchants').where('id', '=', merchantId).execute();
}

function rowCount(result: InsertResult | undefined): number {
  return Number(result?.numInsertedOrUpdatedRows ?? 0n);
}
