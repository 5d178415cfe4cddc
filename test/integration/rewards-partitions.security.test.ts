import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { cancelRewardsByIdentifiers } from '../../src/worker/cancellations/identifier-cancellations.repository.js';
import {
  cancelRewardsOfPlayers,
  cancelSliceOfPlayers,
} from '../../src/worker/cancellations/query-cancellations.repository.js';
import { cancelSingleRewards } from '../../src/worker/cancellations/reward-cancellations.repository.js';
import { createConfiguration, createRewards } from '../helpers/fixtures.js';
import { merchantsInTwoPartitions, partitionOf } from '../helpers/partitions.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * A row address (`ctid`) is unique within one partition only: two merchants in two partitions, filled
 * the same way, have rewards at the very same addresses. The cancel statements hand addresses from one
 * step to the next; each must stay within its merchant's partition, or a cancel of one merchant would
 * change the other's rewards at the same addresses (docs/design.md "Rewards partitioned by merchant").
 */

const { env } = useTestContext();
const PLAYERS = Array.from({ length: 20 }, (_, index) => `player-${String(index).padStart(2, '0')}`);
const REWARDS_PER_PLAYER = 30;
let attacker: { id: string; partition: string; configurationId: string };
let victim: { id: string; partition: string };

beforeAll(async () => {
  const [a, b] = await merchantsInTwoPartitions(env.db);
  if (!a || !b) throw new Error('two merchants expected');
  // Fresh partitions: nothing was ever written to either, so the same inserts give the same addresses.
  const sizes = await sql<{ bytes: string }>`
    SELECT pg_relation_size(name::regclass)::text AS bytes FROM unnest(${[a.partition, b.partition]}::text[]) AS name
  `.execute(env.db);
  expect(sizes.rows.map((row) => Number(row.bytes))).toEqual([0, 0]);
  expect(await partitionOf(env.db, a.merchant.id)).toBe(a.partition);

  for (const { merchant } of [a, b]) {
    const configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
    await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: PLAYERS.flatMap((playerId) =>
        Array.from({ length: REWARDS_PER_PLAYER }, (_, n) => ({ playerId, externalId: `${playerId}-${n}` })),
      ),
    });
    if (merchant === a.merchant) attacker = { id: merchant.id, partition: a.partition, configurationId };
  }
  victim = { id: b.merchant.id, partition: b.partition };
});

async function addresses(partition: string): Promise<string[]> {
  const result = await sql<{
    address: string;
  }>`SELECT ctid::text AS address FROM ${sql.table(partition)} ORDER BY ctid`.execute(env.db);
  return result.rows.map((row) => row.address);
}

async function statusesOf(merchantId: string): Promise<Record<string, number>> {
  const result = await sql<{ status: string; n: number }>`
    SELECT status, count(*)::int AS n FROM rewards WHERE merchant_id = ${merchantId} GROUP BY status
  `.execute(env.db);
  return Object.fromEntries(result.rows.map((row) => [row.status, row.n]));
}

const ALL = PLAYERS.length * REWARDS_PER_PLAYER;

describe('two merchants whose rewards share their addresses', () => {
  it('really do share them: the same addresses in both partitions', async () => {
    const mine = await addresses(attacker.partition);
    expect(mine).toHaveLength(ALL);
    expect(await addresses(victim.partition)).toEqual(mine);
  });

  it('a query cancel of one, in each of its forms, never touches the other', async () => {
    const jobId = randomUUID();
    const query = { jobId, merchantId: attacker.id, filter: {} };
    // Batches through the player index, locked in id order, updated by address.
    const batch = await env.db
      .transaction()
      .execute((trx) => cancelRewardsOfPlayers(trx, { ...query, playerIds: PLAYERS.slice(0, 5), limit: 10_000 }));
    expect(batch.cancelled).toBe(5 * REWARDS_PER_PLAYER);

    // The one-statement slice, in its id-order form (the fast one waits on a held lock and gives up).
    const [held] = (
      await sql<{ id: string }>`
        SELECT id FROM rewards WHERE merchant_id = ${attacker.id} AND player_id = ${PLAYERS[5]} LIMIT 1
      `.execute(env.db)
    ).rows;
    let slice: Promise<{ cancelled: number }> = Promise.resolve({ cancelled: 0 });
    await env.db.transaction().execute(async (holder) => {
      await sql`SELECT 1 FROM rewards WHERE merchant_id = ${attacker.id} AND id = ${held?.id} FOR UPDATE`.execute(
        holder,
      );
      slice = cancelSliceOfPlayers(env.db, { ...query, playerIds: PLAYERS.slice(5, 10), limit: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 400));
    });
    expect((await slice).cancelled).toBe(5 * REWARDS_PER_PLAYER);

    // And its fast form, for the rest.
    const rest = await cancelSliceOfPlayers(env.db, { ...query, playerIds: PLAYERS.slice(10), limit: 10_000 });
    expect(rest.cancelled).toBe(10 * REWARDS_PER_PLAYER);

    expect(await statusesOf(attacker.id)).toEqual({ CANCELLED: ALL });
    expect(await statusesOf(victim.id)).toEqual({ ACTIVE: ALL });
    const touched = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM rewards WHERE merchant_id = ${victim.id} AND cancellation_job_id IS NOT NULL
    `.execute(env.db);
    expect(touched.rows[0]?.n).toBe(0);
  });

  it('nor do the cancels by id, by external id, or single cancels of the other merchant coalesced with it', async () => {
    // The victim's rewards are all ACTIVE at the addresses the attacker's (now cancelled) rewards had; the
    // attacker names the victim's rewards by id and external id: they are not its own, so nothing happens.
    const victimRewards = await sql<{ id: string; externalId: string }>`
      SELECT id, external_id AS "externalId" FROM rewards WHERE merchant_id = ${victim.id} ORDER BY ctid LIMIT 40
    `.execute(env.db);
    const ids = victimRewards.rows.slice(0, 20).map((row) => row.id);
    const externalIds = victimRewards.rows.slice(20).map((row) => row.externalId);
    const result = await env.db
      .transaction()
      .execute((trx) =>
        cancelRewardsByIdentifiers(trx, { jobId: randomUUID(), merchantId: attacker.id, ids, externalIds }),
      );
    // The external ids are the attacker's too (both were filled the same way): those are its own, already cancelled.
    expect(result).toMatchObject({ cancelled: 0, notFound: 20 });

    const at = new Date();
    const outcomes = await cancelSingleRewards(
      env.db,
      ids
        .slice(0, 5)
        .map((rewardId) => ({ jobId: randomUUID(), merchantId: attacker.id, rewardId, createdAt: at, startedAt: at })),
    );
    expect(outcomes).toEqual(['notFound', 'notFound', 'notFound', 'notFound', 'notFound']);
    expect(await statusesOf(victim.id)).toEqual({ ACTIVE: ALL });
  });
});
