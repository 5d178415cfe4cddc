import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/shared/db/client.js';
import type { Database } from '../../src/shared/db/schema.js';
import { listDeferredSlices, listJobRewards } from '../../src/shared/jobs/job-rewards.repository.js';
import {
  cancelRewardsByIdentifiers,
  findExternalIdsNamedById,
} from '../../src/worker/cancellations/identifier-cancellations.repository.js';
import {
  cancelRewardsOfPlayers,
  cancelSliceOfPlayers,
  countCancelledByJob,
} from '../../src/worker/cancellations/query-cancellations.repository.js';
import {
  cancelSingleRewards,
  type SingleCancelRequest,
} from '../../src/worker/cancellations/reward-cancellations.repository.js';
import { createConfiguration, createMerchant, createRewards, type RewardInput } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * The cancel statements on their own, against real Postgres: which rewards each one changes, and
 * the counts it reports, case by case (the routes' and workers' tests see them only through a job).
 */

const { env } = useTestContext();
let merchantId: string;
let otherMerchantId: string;
let configurationId: string;
let otherConfigurationId: string;
let foreignConfigurationId: string;

beforeAll(async () => {
  merchantId = (await createMerchant(env.db)).id;
  otherMerchantId = (await createMerchant(env.db)).id;
  configurationId = (await createConfiguration(env.db, { merchantId, startDate: Date.now(), externalId: 'conf-a' })).id;
  otherConfigurationId = (
    await createConfiguration(env.db, { merchantId, startDate: Date.now(), externalId: 'conf-b' })
  ).id;
  foreignConfigurationId = (
    await createConfiguration(env.db, { merchantId: otherMerchantId, startDate: Date.now(), externalId: 'conf-a' })
  ).id;
});

const unique = (label: string) => `${label}-${randomUUID()}`;

/** A single-cancel request with the times its audit row records. */
function single(fields: Omit<SingleCancelRequest, 'createdAt' | 'startedAt'>): SingleCancelRequest {
  const at = new Date();
  return { ...fields, createdAt: at, startedAt: at };
}

async function rewards(inputs: RewardInput[], options: { merchant?: string; configuration?: string } = {}) {
  return createRewards(env.db, {
    merchantId: options.merchant ?? merchantId,
    rewardConfigurationId: options.configuration ?? configurationId,
    rewards: inputs,
  });
}

async function stateOf(ids: string[]) {
  const rows = await env.db
    .selectFrom('rewards')
    .select(['id', 'status', 'cancellation_job_id', 'cancelled_at'])
    .where('id', 'in', ids)
    .execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => {
    const row = byId.get(id);
    return { status: row?.status, jobId: row?.cancellation_job_id ?? null, hasCancelledAt: row?.cancelled_at != null };
  });
}

function inTransaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return env.db.transaction().execute(work);
}

describe('cancelSingleRewards', () => {
  it('answers nothing for no requests', async () => {
    expect(await inTransaction((trx) => cancelSingleRewards(trx, []))).toEqual([]);
  });

  it('gives each request its own outcome, in request order, and changes only ACTIVE rewards', async () => {
    const player = unique('single');
    const [byId, byExternal, used, expired, cancelledElsewhere] = await rewards([
      { playerId: player, externalId: unique('ext') },
      { playerId: player, externalId: unique('ext') },
      { playerId: player, status: 'USED' },
      { playerId: player, status: 'EXPIRED' },
      { playerId: player },
    ]);
    const [foreign] = await rewards([{ playerId: player, externalId: byExternal?.externalId }], {
      merchant: otherMerchantId,
      configuration: foreignConfigurationId,
    });
    const earlierJob = randomUUID();
    await inTransaction((trx) =>
      cancelSingleRewards(trx, [single({ jobId: earlierJob, merchantId, rewardId: cancelledElsewhere?.id })]),
    );

    const jobIds = Array.from({ length: 8 }, () => randomUUID());
    const requests: SingleCancelRequest[] = [
      single({ jobId: jobIds[0] as string, merchantId, rewardId: byId?.id }),
      single({ jobId: jobIds[1] as string, merchantId, externalId: byExternal?.externalId as string }),
      single({ jobId: jobIds[2] as string, merchantId, rewardId: used?.id }),
      single({ jobId: jobIds[3] as string, merchantId, rewardId: expired?.id }),
      single({ jobId: jobIds[4] as string, merchantId, rewardId: cancelledElsewhere?.id }),
      single({ jobId: jobIds[5] as string, merchantId, rewardId: randomUUID() }),
      single({ jobId: jobIds[6] as string, merchantId, externalId: unique('missing') }),
      // Another merchant's reward is not found, by id or by external id.
      single({ jobId: jobIds[7] as string, merchantId, rewardId: foreign?.id }),
    ];
    const outcomes = await inTransaction((trx) => cancelSingleRewards(trx, requests));
    expect(outcomes).toEqual([
      'cancelled',
      'cancelled',
      'notCancellable',
      'notCancellable',
      'alreadyCancelled',
      'notFound',
      'notFound',
      'notFound',
    ]);

    const ids = [byId, byExternal, used, expired, cancelledElsewhere, foreign].map((reward) => reward?.id as string);
    expect(await stateOf(ids)).toEqual([
      { status: 'CANCELLED', jobId: jobIds[0], hasCancelledAt: true },
      { status: 'CANCELLED', jobId: jobIds[1], hasCancelledAt: true },
      { status: 'USED', jobId: null, hasCancelledAt: false },
      { status: 'EXPIRED', jobId: null, hasCancelledAt: false },
      { status: 'CANCELLED', jobId: earlierJob, hasCancelledAt: true },
      { status: 'ACTIVE', jobId: null, hasCancelledAt: false },
    ]);
    // Each request's audit row, written by the same statement: completed, with its own outcome (its counts,
    // NULL as columns) and the reward it cancelled, if it did (what its rewards page lists).
    const audit = await env.db
      .selectFrom('cancellation_jobs')
      .select(['id', 'state', 'operation', 'outcome', 'reward_id', 'requested', 'cancelled'])
      .where('id', 'in', jobIds)
      .execute();
    const row = (outcome: string, rewardId: string | null = null) => ({
      state: 'completed',
      operation: 'cancel',
      outcome,
      reward_id: rewardId,
      requested: null,
      cancelled: null,
    });
    expect(jobIds.map((id) => audit.find((found) => found.id === id))).toEqual([
      { id: jobIds[0], ...row('cancelled', byId?.id) },
      { id: jobIds[1], ...row('cancelled', byExternal?.id) },
      { id: jobIds[2], ...row('notCancellable') },
      { id: jobIds[3], ...row('notCancellable') },
      { id: jobIds[4], ...row('alreadyCancelled') },
      { id: jobIds[5], ...row('notFound') },
      { id: jobIds[6], ...row('notFound') },
      { id: jobIds[7], ...row('notFound') },
    ]);
    // Nothing in job_rewards for a single cancel: its reward is on its row.
    const listed = await env.db.selectFrom('job_rewards').select('job_id').where('job_id', 'in', jobIds).execute();
    expect(listed).toEqual([]);
    expect(
      (await listJobRewards(env.db, { jobId: jobIds[1] as string, merchantId, after: undefined, limit: 10 })).rewards,
    ).toEqual([{ id: byExternal?.id, externalId: byExternal?.externalId, playerId: player }]);

    // A retry of the same jobs reports the same outcomes and changes nothing more.
    expect(await inTransaction((trx) => cancelSingleRewards(trx, requests))).toEqual(outcomes);
    expect((await stateOf(ids))[0]).toEqual({ status: 'CANCELLED', jobId: jobIds[0], hasCancelledAt: true });
  });

  it('goes by the id when a request carries both an id and an external id', async () => {
    const player = unique('both');
    const [named, other] = await rewards([
      { playerId: player, externalId: unique('ext') },
      { playerId: player, externalId: unique('ext') },
    ]);
    const jobId = randomUUID();
    const outcomes = await inTransaction((trx) =>
      cancelSingleRewards(trx, [
        single({ jobId, merchantId, rewardId: named?.id, externalId: other?.externalId as string }),
      ]),
    );
    expect(outcomes).toEqual(['cancelled']);
    expect((await stateOf([named?.id as string, other?.id as string])).map((state) => state.status)).toEqual([
      'CANCELLED',
      'ACTIVE',
    ]);
  });

  it('settles requests of several merchants in one statement, each within its own merchant', async () => {
    const externalId = unique('shared-ext');
    const [mine] = await rewards([{ playerId: unique('m1'), externalId }]);
    const [theirs] = await rewards([{ playerId: unique('m2'), externalId }], {
      merchant: otherMerchantId,
      configuration: foreignConfigurationId,
    });
    const [first, second] = [randomUUID(), randomUUID()];
    const outcomes = await inTransaction((trx) =>
      cancelSingleRewards(trx, [
        single({ jobId: first, merchantId, externalId }),
        single({ jobId: second, merchantId: otherMerchantId, externalId }),
      ]),
    );
    expect(outcomes).toEqual(['cancelled', 'cancelled']);
    expect(await stateOf([mine?.id as string, theirs?.id as string])).toEqual([
      { status: 'CANCELLED', jobId: first, hasCancelledAt: true },
      { status: 'CANCELLED', jobId: second, hasCancelledAt: true },
    ]);
  });
});

describe('cancelRewardsByIdentifiers', () => {
  it('counts each reward once, by outcome, and a retry of the same job reports the same counts', async () => {
    const player = unique('bulk');
    const [a, b, used, cancelledElsewhere, untouched] = await rewards([
      { playerId: player, externalId: unique('ext') },
      { playerId: player, externalId: unique('ext') },
      { playerId: player, externalId: unique('ext'), status: 'EXPIRED' },
      { playerId: player, externalId: unique('ext') },
      { playerId: player, externalId: unique('ext') },
    ]);
    const [foreign] = await rewards([{ playerId: player, externalId: unique('ext') }], {
      merchant: otherMerchantId,
      configuration: foreignConfigurationId,
    });
    const earlierJob = randomUUID();
    await inTransaction((trx) =>
      cancelSingleRewards(trx, [single({ jobId: earlierJob, merchantId, rewardId: cancelledElsewhere?.id })]),
    );

    const jobId = randomUUID();
    const params = {
      jobId,
      merchantId,
      // `a` named both ways; a foreign reward and an unknown id are not found.
      ids: [a?.id, used?.id, foreign?.id, randomUUID()] as string[],
      externalIds: [a?.externalId, b?.externalId, cancelledElsewhere?.externalId, unique('missing')] as string[],
    };
    const counts = await inTransaction((trx) => cancelRewardsByIdentifiers(trx, params));
    expect(counts).toEqual({ cancelled: 2, alreadyCancelled: 1, notCancellable: 1, notFound: 3 });
    expect(await stateOf([a, b, untouched, foreign].map((reward) => reward?.id as string))).toEqual([
      { status: 'CANCELLED', jobId, hasCancelledAt: true },
      { status: 'CANCELLED', jobId, hasCancelledAt: true },
      { status: 'ACTIVE', jobId: null, hasCancelledAt: false },
      { status: 'ACTIVE', jobId: null, hasCancelledAt: false },
    ]);

    // Each identifier not cancelled is recorded with why (jobs/unapplied), the cancelled ones are not.
    const unapplied = [
      { kind: 'id', identifier: used?.id, outcome: 'notCancellable' },
      { kind: 'id', identifier: foreign?.id, outcome: 'notFound' },
      { kind: 'id', identifier: params.ids[3], outcome: 'notFound' },
      { kind: 'externalId', identifier: cancelledElsewhere?.externalId, outcome: 'alreadyCancelled' },
      { kind: 'externalId', identifier: params.externalIds[3], outcome: 'notFound' },
    ];
    const sortedRows = (rows: Array<{ kind: string; identifier?: string | null }>) =>
      [...rows].sort((x, y) => `${x.kind}/${x.identifier}`.localeCompare(`${y.kind}/${y.identifier}`));
    const recorded = () =>
      env.db
        .selectFrom('job_unapplied_identifiers')
        .select(['kind', 'identifier', 'outcome'])
        .where('merchant_id', '=', merchantId)
        .where('job_id', '=', jobId)
        .execute();
    expect(sortedRows(await recorded())).toEqual(sortedRows(unapplied));

    // The retry: the same counts and the same rows, none twice.
    expect(await inTransaction((trx) => cancelRewardsByIdentifiers(trx, params))).toEqual(counts);
    expect(sortedRows(await recorded())).toEqual(sortedRows(unapplied));
    // Another job finds them already cancelled.
    expect(await inTransaction((trx) => cancelRewardsByIdentifiers(trx, { ...params, jobId: randomUUID() }))).toEqual({
      cancelled: 0,
      alreadyCancelled: 3,
      notCancellable: 1,
      notFound: 3,
    });
  });

  it('leaves out the rewards of excludeIds, neither changing nor counting them', async () => {
    const player = unique('exclude');
    const [kept, excluded] = await rewards([
      { playerId: player, externalId: unique('ext') },
      { playerId: player, externalId: unique('ext') },
    ]);
    const jobId = randomUUID();
    const counts = await inTransaction((trx) =>
      cancelRewardsByIdentifiers(trx, {
        jobId,
        merchantId,
        ids: [],
        externalIds: [kept?.externalId, excluded?.externalId] as string[],
        excludeIds: [excluded?.id as string],
      }),
    );
    expect(counts).toEqual({ cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 });
    expect((await stateOf([kept?.id as string, excluded?.id as string])).map((state) => state.status)).toEqual([
      'CANCELLED',
      'ACTIVE',
    ]);
  });
});

describe('the listing of what a bulk batch cancelled', () => {
  const rowsOf = async (jobId: string) =>
    env.db.selectFrom('job_rewards').select(['bucket', 'reward_ids']).where('job_id', '=', jobId).execute();

  it('lists a short batch as one row, a long one by bucket, and pages through both in id order', async () => {
    const player = unique('listing');
    const many = await rewards(Array.from({ length: 2_100 }, () => ({ playerId: player })));
    const few = await rewards(Array.from({ length: 30 }, () => ({ playerId: player })));
    const jobId = randomUUID();
    const batch = (ids: string[]) =>
      inTransaction((trx) => cancelRewardsByIdentifiers(trx, { jobId, merchantId, ids, externalIds: [] }));

    await batch(few.map((reward) => reward.id));
    const short = await rowsOf(jobId);
    expect(short.map((row) => row.bucket)).toEqual([-1]);
    expect(short[0]?.reward_ids).toEqual(few.map((reward) => reward.id).sort());

    await batch(many.map((reward) => reward.id));
    const buckets = (await rowsOf(jobId)).map((row) => row.bucket).filter((bucket) => bucket >= 0);
    expect(buckets.length).toBeGreaterThan(200);

    const listed: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await listJobRewards(env.db, { jobId, merchantId, after, limit: 300 });
      listed.push(...page.rewards.map((reward) => reward.id));
      if (page.next === null) break;
      after = page.next;
    }
    expect(listed).toEqual([...many, ...few].map((reward) => reward.id).sort());
  });
});

describe('findExternalIdsNamedById', () => {
  it('lists the external ids whose reward the ids also name, within the merchant', async () => {
    const player = unique('named');
    const [both, onlyExternal] = await rewards([
      { playerId: player, externalId: unique('ext') },
      { playerId: player, externalId: unique('ext') },
    ]);
    const [foreign] = await rewards([{ playerId: player, externalId: both?.externalId }], {
      merchant: otherMerchantId,
      configuration: foreignConfigurationId,
    });
    const externalIds = [both?.externalId, onlyExternal?.externalId] as string[];
    expect(
      await findExternalIdsNamedById(env.db, { merchantId, ids: [both?.id as string, randomUUID()], externalIds }),
    ).toEqual([both?.externalId]);
    expect(await findExternalIdsNamedById(env.db, { merchantId, ids: [foreign?.id as string], externalIds })).toEqual(
      [],
    );
    expect(await findExternalIdsNamedById(env.db, { merchantId, ids: [], externalIds })).toEqual([]);
    expect(await findExternalIdsNamedById(env.db, { merchantId, ids: [both?.id as string], externalIds: [] })).toEqual(
      [],
    );
  });
});

describe('cancelRewardsOfPlayers and countCancelledByJob', () => {
  it('cancels at most `limit` ACTIVE rewards of the players per statement, and counts what it picked', async () => {
    const [p1, p2, outsider] = [unique('p1'), unique('p2'), unique('p3')];
    await rewards([
      { playerId: p1 },
      { playerId: p1 },
      { playerId: p1, status: 'USED' },
      { playerId: p2 },
      { playerId: p2 },
      { playerId: outsider },
    ]);
    await rewards([{ playerId: p1 }], { merchant: otherMerchantId, configuration: foreignConfigurationId });
    const jobId = randomUUID();
    const batch = (limit: number) =>
      inTransaction((trx) =>
        cancelRewardsOfPlayers(trx, { jobId, merchantId, playerIds: [p1, p2], filter: {}, limit }),
      );

    expect(await batch(3)).toEqual({ picked: 3, cancelled: 3 });
    expect(await batch(3)).toEqual({ picked: 1, cancelled: 1 });
    expect(await batch(3)).toEqual({ picked: 0, cancelled: 0 });

    expect(await countCancelledByJob(env.db, { jobId, merchantId, playerIds: [p1, p2] })).toBe(4);
    expect(await countCancelledByJob(env.db, { jobId, merchantId, playerIds: [p1] })).toBe(2);
    expect(await countCancelledByJob(env.db, { jobId: randomUUID(), merchantId, playerIds: [p1, p2] })).toBe(0);
    expect(await countCancelledByJob(env.db, { jobId, merchantId: otherMerchantId, playerIds: [p1] })).toBe(0);

    const left = await env.db
      .selectFrom('rewards')
      .select(['player_id', 'merchant_id', 'status'])
      .where('player_id', 'in', [p1, p2, outsider])
      .where('status', '!=', 'CANCELLED')
      .orderBy('player_id')
      .execute();
    expect(left).toEqual(
      expect.arrayContaining([
        { player_id: p1, merchant_id: merchantId, status: 'USED' },
        { player_id: p1, merchant_id: otherMerchantId, status: 'ACTIVE' },
        { player_id: outsider, merchant_id: merchantId, status: 'ACTIVE' },
      ]),
    );
    expect(left).toHaveLength(3);
  });

  it('keeps to the configuration filter: by id, by external id, and both must match when both are given', async () => {
    const player = unique('filter');
    const [inA] = await rewards([{ playerId: player }]);
    const [inB] = await rewards([{ playerId: player }], { configuration: otherConfigurationId });
    const run = (filter: { rewardConfigurationId?: string; externalRewardConfigurationId?: string }) =>
      inTransaction((trx) =>
        cancelRewardsOfPlayers(trx, { jobId: randomUUID(), merchantId, playerIds: [player], filter, limit: 100 }),
      );

    // Both given and naming different configurations: nothing matches both.
    expect(await run({ rewardConfigurationId: configurationId, externalRewardConfigurationId: 'conf-b' })).toEqual({
      picked: 0,
      cancelled: 0,
    });
    // The other merchant's configuration with the same external id does not count.
    expect(await run({ externalRewardConfigurationId: 'conf-a' })).toEqual({ picked: 1, cancelled: 1 });
    expect((await stateOf([inA?.id as string, inB?.id as string])).map((state) => state.status)).toEqual([
      'CANCELLED',
      'ACTIVE',
    ]);
    expect(await run({ rewardConfigurationId: configurationId })).toEqual({ picked: 0, cancelled: 0 });
    expect(await run({ rewardConfigurationId: otherConfigurationId, externalRewardConfigurationId: 'conf-b' })).toEqual(
      { picked: 1, cancelled: 1 },
    );
  });
});

describe('cancelSliceOfPlayers', () => {
  it('cancels the whole slice in one statement when its players hold at most `limit` rewards', async () => {
    const [p1, p2] = [unique('s1'), unique('s2')];
    const created = await rewards([
      { playerId: p1 },
      { playerId: p1, status: 'USED' },
      { playerId: p2 },
      { playerId: p2, status: 'CANCELLED' },
    ]);
    await rewards([{ playerId: p1 }], { merchant: otherMerchantId, configuration: foreignConfigurationId });
    const jobId = randomUUID();
    const slice = (limit: number) =>
      cancelSliceOfPlayers(env.db, { jobId, merchantId, playerIds: [p1, p2], filter: {}, limit });

    // Four rewards in any state: above a limit of 3 nothing changes, and the caller is told to batch.
    expect(await slice(3)).toEqual({ rewards: 4, applied: false, cancelled: 0 });
    expect((await stateOf(created.map((r) => r.id))).map((r) => r.status)).toEqual([
      'ACTIVE',
      'USED',
      'ACTIVE',
      'CANCELLED',
    ]);

    expect(await slice(4)).toEqual({ rewards: 4, applied: true, cancelled: 2 });
    expect(await slice(4)).toEqual({ rewards: 4, applied: true, cancelled: 0 });
    expect(await countCancelledByJob(env.db, { jobId, merchantId, playerIds: [p1, p2] })).toBe(2);
  });

  it('keeps to the configuration filter', async () => {
    const player = unique('slice-filter');
    const [inA, inB] = [
      ...(await rewards([{ playerId: player }])),
      ...(await rewards([{ playerId: player }], { configuration: otherConfigurationId })),
    ];
    const result = await cancelSliceOfPlayers(env.db, {
      jobId: randomUUID(),
      merchantId,
      playerIds: [player],
      filter: { externalRewardConfigurationId: 'conf-b' },
      limit: 100,
    });
    expect(result).toEqual({ rewards: 2, applied: true, cancelled: 1 });
    expect((await stateOf([inA?.id as string, inB?.id as string])).map((state) => state.status)).toEqual([
      'ACTIVE',
      'CANCELLED',
    ]);
  });
});

describe("the listing of one-statement slices, deferred to the worker's listing", () => {
  const pendingSlices = async (jobId: string) =>
    (await env.db.selectFrom('job_cancel_slices').select('id').where('job_id', '=', jobId).execute()).length;
  const listedRows = async (jobId: string) =>
    (await env.db.selectFrom('job_rewards').select('bucket').where('job_id', '=', jobId).execute()).length;
  // What the worker does at a job's end (listDeferredSlices), then what the API reads.
  const page = async (jobId: string, limit = 100) => {
    await listDeferredSlices(env.db, { merchantId, jobId }, { skipLocked: false });
    return listJobRewards(env.db, { jobId, merchantId, after: undefined, limit });
  };
  const ids = (rows: ReadonlyArray<{ id: string }>) => rows.map((row) => row.id).sort();

  it('notes the slice instead of listing it; the listing lists it, and every run of the job lists only its own', async () => {
    const player = unique('deferred');
    const first = await rewards([{ playerId: player }, { playerId: player }]);
    const jobId = randomUUID();
    const run = () => cancelSliceOfPlayers(env.db, { jobId, merchantId, playerIds: [player], filter: {}, limit: 100 });

    expect(await run()).toEqual({ rewards: 2, applied: true, cancelled: 2 });
    expect([await pendingSlices(jobId), await listedRows(jobId)]).toEqual([1, 0]);
    // A run that changes nothing (the job again, a retry) notes nothing.
    expect(await run()).toEqual({ rewards: 2, applied: true, cancelled: 0 });
    expect(await pendingSlices(jobId)).toBe(1);
    expect(ids((await page(jobId)).rewards)).toEqual(ids(first));
    expect(await pendingSlices(jobId)).toBe(0);

    // The job runs the slice again after a reward was added: that statement notes its own change, under
    // its own now(); the rewards listed by the first read are not listed again.
    const later = await rewards([{ playerId: player }]);
    expect(await run()).toEqual({ rewards: 3, applied: true, cancelled: 1 });
    const listed = (await page(jobId)).rewards;
    expect(ids(listed)).toEqual(ids([...first, ...later]));
    expect(listed).toHaveLength(3);
    expect(ids((await page(jobId)).rewards)).toEqual(ids([...first, ...later]));
  });

  it('counts what a job cancelled from the rewards once it has listed anything, before and after the read', async () => {
    const [p1, p2] = [unique('counted-1'), unique('counted-2')];
    await rewards([{ playerId: p1 }, { playerId: p1 }, { playerId: p2 }]);
    const jobId = randomUUID();
    const count = (playerIds: string[]) => countCancelledByJob(env.db, { jobId, merchantId, playerIds });
    expect(await count([p1, p2])).toBe(0);
    await cancelSliceOfPlayers(env.db, { jobId, merchantId, playerIds: [p1], filter: {}, limit: 10 });
    expect([await count([p1]), await count([p1, p2])]).toEqual([2, 2]);
    await page(jobId); // the noted slice becomes job_rewards rows
    expect((await listJobRewards(env.db, { jobId, merchantId, after: undefined, limit: 10 })).rewards).toHaveLength(2);
    expect([await pendingSlices(jobId), await count([p1, p2])]).toEqual([0, 2]);
  });

  it('answers 0 without reading the rewards for a job that listed nothing of these players', async () => {
    // No cancel statement marks a reward without listing it; one marked behind the statements' back
    // shows that the count was not read from the rewards.
    const player = unique('unlisted');
    const [marked] = await rewards([{ playerId: player }]);
    const jobId = randomUUID();
    await env.db
      .updateTable('rewards')
      .set({ status: 'CANCELLED', cancellation_job_id: jobId })
      .where('id', '=', marked?.id as string)
      .execute();
    expect(await countCancelledByJob(env.db, { jobId, merchantId, playerIds: [player] })).toBe(0);
  });

  it('a listing that meets another one mid-way waits for its slices, or with skipLocked leaves them to it', async () => {
    const players = Array.from({ length: 25 }, (_, index) => unique(`raced-${index}`));
    const created = await rewards(players.map((playerId) => ({ playerId })));
    const jobId = randomUUID();
    for (const playerId of players) {
      await cancelSliceOfPlayers(env.db, { jobId, merchantId, playerIds: [playerId], filter: {}, limit: 10 });
    }
    // Another reader, held half-way: it has taken the ten oldest slices and listed their rewards, and has
    // not committed yet; the fifteen others are still pending.
    const other = new pg.Client({ connectionString: env.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(
        `WITH taken AS (
           DELETE FROM job_cancel_slices WHERE id IN (
             SELECT id FROM job_cancel_slices WHERE job_id = $1 ORDER BY id LIMIT 10)
           RETURNING merchant_id, cancelled_at, player_ids)
         INSERT INTO job_rewards (merchant_id, job_id, bucket, first_id, reward_ids)
         SELECT t.merchant_id, $1, get_byte(uuid_send(r.id), 0), r.id, ARRAY[r.id]
         FROM taken t JOIN rewards r ON r.merchant_id = t.merchant_id AND r.player_id = ANY(t.player_ids)
           AND r.cancellation_job_id = $1 AND r.cancelled_at = t.cancelled_at`,
        [jobId],
      );
      // A lister of another worker (skipLocked) lists the fifteen others and leaves the ten to the holder.
      await listDeferredSlices(env.db, { merchantId, jobId }, { skipLocked: true });
      expect(await pendingSlices(jobId)).toBe(10);
      const reading = page(jobId);
      // The job's own last step waits on the other's ten slices; once those are committed, it goes on.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await other.query('COMMIT');
      const listed = await reading;
      expect(ids(listed.rewards)).toEqual(ids(created));
      expect(await pendingSlices(jobId)).toBe(0);
    } finally {
      await other.end();
    }
  });

  it('expands every pending slice of the job, however many, and only that job', async () => {
    const players = Array.from({ length: 25 }, (_, index) => unique(`many-${index}`));
    const created = await rewards(players.map((playerId) => ({ playerId })));
    const jobId = randomUUID();
    const otherJob = randomUUID();
    const otherPlayer = unique('other-job');
    await rewards([{ playerId: otherPlayer }]);
    for (const playerId of players) {
      await cancelSliceOfPlayers(env.db, { jobId, merchantId, playerIds: [playerId], filter: {}, limit: 10 });
    }
    await cancelSliceOfPlayers(env.db, {
      jobId: otherJob,
      merchantId,
      playerIds: [otherPlayer],
      filter: {},
      limit: 10,
    });
    expect(await pendingSlices(jobId)).toBe(25);

    // Two listings at once: each reward is listed once.
    const [a, b] = await Promise.all([page(jobId), page(jobId)]);
    expect(ids(a.rewards)).toEqual(ids(created));
    expect(ids(b.rewards)).toEqual(ids(created));
    expect(a.rewards).toHaveLength(25);
    expect(await pendingSlices(jobId)).toBe(0);
    expect(await pendingSlices(otherJob)).toBe(1);
  });
});

describe('the coalesced single-cancel write', () => {
  it('cancels and records batches of any size, one after another on the same connection', async () => {
    const db = createDb({ connectionString: env.databaseUrl, poolSize: 1, applicationName: 'rewards-test-batches' });
    try {
      for (const size of [1, 3, 7]) {
        const created = await rewards(Array.from({ length: size }, () => ({ playerId: unique('batch') })));
        const requests = created.map((reward) => single({ jobId: randomUUID(), merchantId, rewardId: reward.id }));
        expect(await cancelSingleRewards(db, requests)).toEqual(requests.map(() => 'cancelled'));
        const recorded = await env.db
          .selectFrom('cancellation_jobs')
          .select(['state', 'outcome', 'attempts'])
          .where(
            'id',
            'in',
            requests.map((request) => request.jobId),
          )
          .execute();
        expect(recorded).toEqual(requests.map(() => ({ state: 'completed', outcome: 'cancelled', attempts: 1 })));
      }
    } finally {
      await db.destroy();
    }
  });
});
