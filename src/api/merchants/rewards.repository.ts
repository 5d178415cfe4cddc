import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from '../../shared/db/client.js';
import type { Reward, RewardStatus } from '../../shared/db/schema.js';

export interface NewRewardInput {
  playerId: string;
  rewardConfigurationId: string;
  externalId: string | null;
  status: RewardStatus;
}

export interface InsertedReward extends NewRewardInput {
  id: string;
}

/** Name of the unique index behind "one reward externalId per merchant" (the migration's). */
export const REWARD_EXTERNAL_ID_KEY = 'rewards_merchant_external_id_key';

/**
 * Up to thousands of rewards in one statement: the columns go in as arrays and `unnest` turns them
 * into rows. Ids are made here rather than by Postgres so that the answer is in request order
 * without relying on the order of RETURNING. A reward created CANCELLED gets `cancelled_at` now
 * (and no job id): every cancelled reward has a time.
 */
export async function insertRewards(
  db: Executor,
  merchantId: string,
  rewards: readonly NewRewardInput[],
): Promise<InsertedReward[]> {
  if (rewards.length === 0) return [];
  const inserted = rewards.map((reward) => ({ ...reward, id: randomUUID() }));
  await sql`
    INSERT INTO rewards (id, merchant_id, external_id, player_id, reward_configuration_id, status, cancelled_at)
    SELECT r.id, ${merchantId}::uuid, r.external_id, r.player_id, r.reward_configuration_id, r.status,
      CASE WHEN r.status = 'CANCELLED' THEN now() END
    FROM unnest(
      ${inserted.map((reward) => reward.id)}::uuid[],
      ${inserted.map((reward) => reward.externalId)}::text[],
      ${inserted.map((reward) => reward.playerId)}::text[],
      ${inserted.map((reward) => reward.rewardConfigurationId)}::uuid[],
      ${inserted.map((reward) => reward.status)}::text[]
    ) AS r (id, external_id, player_id, reward_configuration_id, status)
  `.execute(db);
  return inserted;
}

/** The merchant's reward with this id; another merchant's reward is not found. */
export async function findRewardForMerchant(
  db: Executor,
  merchantId: string,
  rewardId: string,
): Promise<Reward | undefined> {
  return db
    .selectFrom('rewards')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', rewardId)
    .executeTakeFirst();
}

/** Which of `externalIds` the merchant's rewards already use. */
export async function findTakenRewardExternalIds(
  db: Executor,
  merchantId: string,
  externalIds: readonly string[],
): Promise<Set<string>> {
  if (externalIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('rewards')
    .select('external_id')
    .where('merchant_id', '=', merchantId)
    .where('external_id', '=', sql<string>`ANY(${[...externalIds]}::text[])`)
    .execute();
  return new Set(rows.map((row) => row.external_id as string));
}
