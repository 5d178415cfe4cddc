import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

const path = '/api/v1/integration/jobs/unapplied';

// Batches of 3: the outcomes of one job come from several transactions.
const { env, api } = useTestContext({ settings: { CANCEL_BATCH_SIZE: '3' }, api: true, worker: true });
let merchant: MerchantFixture;
let other: MerchantFixture;
let configurationId: string;
let otherConfigurationId: string;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  other = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
  otherConfigurationId = (await createConfiguration(env.db, { merchantId: other.id, startDate: Date.now() })).id;
});

interface Entry {
  kind: 'id' | 'externalId';
  identifier: string;
  outcome: 'notFound' | 'notCancellable' | 'alreadyCancelled';
}
interface Page {
  identifiers: Entry[];
  next: { kind: string; identifier: string } | null;
}

async function page(jobId: string, extra: Record<string, unknown> = {}): Promise<Page> {
  const response = await api.post(path, signedBody(merchant, { jobId, ...extra }));
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
}

/** Every entry, following `next` as `after`; checks each page's size and cursor on the way. */
async function allPages(jobId: string, limit: number): Promise<{ entries: Entry[]; pages: number }> {
  const entries: Entry[] = [];
  let after: Page['next'] = null;
  let pages = 0;
  do {
    const current: Page = await page(jobId, { limit, ...(after ? { after } : {}) });
    pages += 1;
    expect(current.identifiers.length).toBeLessThanOrEqual(limit);
    entries.push(...current.identifiers);
    after = current.next;
    const last = current.identifiers.at(-1);
    if (after) expect(after).toEqual({ kind: last?.kind, identifier: last?.identifier });
  } while (after);
  return { entries, pages };
}

function byKey(a: Entry, b: Entry): number {
  return a.kind === b.kind ? (a.identifier < b.identifier ? -1 : 1) : a.kind < b.kind ? -1 : 1;
}

describe('what a bulkCancel did not cancel', () => {
  it('lists each identifier it did not cancel with why, page by page, and its counts agree', async () => {
    const rewards = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [
        { playerId: 'p1', externalId: 'active-by-id' },
        { playerId: 'p1', externalId: 'used-by-id', status: 'USED' },
        { playerId: 'p1', externalId: 'expired-by-id', status: 'EXPIRED' },
        { playerId: 'p1', externalId: 'cancelled-before' },
        { playerId: 'p2', externalId: 'active-by-external' },
        { playerId: 'p2', externalId: 'used-by-external', status: 'USED' },
        { playerId: 'p2', externalId: 'named-both-ways' },
      ],
    });
    const [activeById, usedById, expiredById, cancelledBefore, , , namedBothWays] = rewards;
    // Another merchant's reward: to this merchant it does not exist.
    const [foreign] = await createRewards(env.db, {
      merchantId: other.id,
      rewardConfigurationId: otherConfigurationId,
      rewards: [{ playerId: 'p1', externalId: 'foreign' }],
    });
    const earlier = await requestCancellation(api, merchant, 'cancel', { id: cancelledBefore?.id });
    await waitForJob(api, merchant, earlier);

    const unknownId = randomUUID();
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', {
      ids: [
        activeById?.id,
        usedById?.id,
        expiredById?.id,
        cancelledBefore?.id,
        unknownId,
        foreign?.id,
        namedBothWays?.id,
      ],
      externalIds: ['active-by-external', 'used-by-external', 'nobody-has-this', 'foreign', 'named-both-ways'],
    });
    const status = await waitForJob(api, merchant, jobId);

    const listed: Entry[] = [
      { kind: 'id', identifier: usedById?.id as string, outcome: 'notCancellable' },
      { kind: 'id', identifier: expiredById?.id as string, outcome: 'notCancellable' },
      { kind: 'id', identifier: cancelledBefore?.id as string, outcome: 'alreadyCancelled' },
      { kind: 'id', identifier: unknownId, outcome: 'notFound' },
      { kind: 'id', identifier: foreign?.id as string, outcome: 'notFound' },
      { kind: 'externalId', identifier: 'used-by-external', outcome: 'notCancellable' },
      { kind: 'externalId', identifier: 'nobody-has-this', outcome: 'notFound' },
      { kind: 'externalId', identifier: 'foreign', outcome: 'notFound' },
    ];
    const expected = [...listed].sort(byKey);

    // One page, and pages of one: the same entries in key order, the cursor followed to the end.
    expect(await page(jobId)).toEqual({ identifiers: expected, next: null });
    const { entries, pages } = await allPages(jobId, 1);
    expect(entries).toEqual(expected);
    expect(pages).toBe(expected.length);

    // The status's counts are these entries by outcome (the cancelled ones are not listed here).
    const count = (outcome: Entry['outcome']) => expected.filter((entry) => entry.outcome === outcome).length;
    expect(status.result).toMatchObject({
      requested: 12,
      cancelled: 3,
      notCancellable: count('notCancellable'),
      alreadyCancelled: count('alreadyCancelled'),
      notFound: count('notFound'),
    });
    // The other merchant's reward is untouched.
    const untouched = await env.db
      .selectFrom('rewards')
      .select('status')
      .where('id', '=', foreign?.id as string)
      .execute();
    expect(untouched).toEqual([{ status: 'ACTIVE' }]);
  });

  it('a job that cancelled everything it named, and a query cancel, list nothing', async () => {
    await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [
        { playerId: 'p4', externalId: 'all-1' },
        { playerId: 'p4', externalId: 'all-2' },
      ],
    });
    const byIds = await requestCancellation(api, merchant, 'bulkCancel', { externalIds: ['all-1', 'all-2'] });
    await waitForJob(api, merchant, byIds);
    expect(await page(byIds)).toEqual({ identifiers: [], next: null });
    const byQuery = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: ['nobody-at-all'] });
    await waitForJob(api, merchant, byQuery);
    expect(await page(byQuery)).toEqual({ identifiers: [], next: null });
  });
});
