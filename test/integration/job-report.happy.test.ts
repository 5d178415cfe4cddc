import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { fetchJobReport, parseJobReport } from '../helpers/job-report.js';
import { useTestContext } from '../helpers/test-context.js';

// Batches of 3: the job's outcomes come from several transactions, and the report from several reads.
const { env, api } = useTestContext({ settings: { CANCEL_BATCH_SIZE: '3' }, api: true, worker: true });
let merchant: MerchantFixture;
let other: MerchantFixture;
let configurationId: string;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  other = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
});

type Line = { id: string | null; externalId: string | null; playerId: string | null; outcome: string };

const outcomes = ['cancelled', 'alreadyCancelled', 'notCancellable', 'notFound'] as const;

describe('the report of a finished bulk job', () => {
  it('gives every requested identifier once with its outcome; counts equal the job result; checksum and gzip hold', async () => {
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
        { playerId: 'p3' },
      ],
    });
    const [activeById, usedById, expiredById, cancelledBefore, activeByExternal, usedByExternal, both, noExternal] =
      rewards as NonNullable<(typeof rewards)[number]>[];
    const [foreign] = await createRewards(env.db, {
      merchantId: other.id,
      rewardConfigurationId: (await createConfiguration(env.db, { merchantId: other.id, startDate: Date.now() })).id,
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
        both?.id,
        noExternal?.id,
      ],
      externalIds: ['active-by-external', 'used-by-external', 'nobody-has-this', 'foreign', 'named-both-ways'],
    });
    const status = await waitForJob(api, merchant, jobId);
    expect(status.state).toBe('completed');

    const plain = await fetchJobReport(api, merchant, jobId);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('application/x-ndjson');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const report = parseJobReport(plain.body);
    expect(report.checksumHolds).toBe(true);

    const line = (reward: (typeof rewards)[number] | undefined, outcome: string): Line => ({
      id: reward?.id as string,
      externalId: reward?.externalId ?? null,
      playerId: reward?.playerId as string,
      outcome,
    });
    const cancelled = [
      line(activeById, 'cancelled'),
      line(activeByExternal, 'cancelled'),
      line(both, 'cancelled'),
      line(noExternal, 'cancelled'),
    ].sort((a, b) => ((a.id as string) < (b.id as string) ? -1 : 1));
    // Cancelled rewards first (in listing order); then what was not cancelled, by kind and identifier.
    expect(
      [...report.lines.slice(0, cancelled.length)].sort((a, b) => ((a.id as string) < (b.id as string) ? -1 : 1)),
    ).toEqual(cancelled);
    const byText = (a: unknown, b: unknown) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1);
    expect([...report.lines.slice(cancelled.length)].sort(byText)).toEqual(
      [
        line(usedById, 'notCancellable'),
        line(expiredById, 'notCancellable'),
        line(cancelledBefore, 'alreadyCancelled'),
        { id: unknownId, externalId: null, playerId: null, outcome: 'notFound' },
        { id: foreign?.id, externalId: null, playerId: null, outcome: 'notFound' },
        line(usedByExternal, 'notCancellable'),
        { id: null, externalId: 'nobody-has-this', playerId: null, outcome: 'notFound' },
        { id: null, externalId: 'foreign', playerId: null, outcome: 'notFound' },
      ].sort(byText),
    );
    expect(report.lines).toHaveLength(12);
    // Every identifier once: no id or external id of a found reward on two lines.
    const names = report.lines.flatMap((entry) => [entry.id, entry.externalId]).filter((name) => name !== null);
    expect(new Set(names).size).toBe(names.length);

    // The lines add up to the job's counts, and the summary says so.
    const count = (outcome: string) => report.lines.filter((entry) => entry.outcome === outcome).length;
    for (const outcome of outcomes) {
      expect(count(outcome), outcome).toBe(status.result?.[outcome]);
      expect(report.summary[outcome], outcome).toBe(count(outcome));
    }
    expect(report.summary).toMatchObject({
      jobId,
      operation: 'bulkCancel',
      state: 'completed',
      lines: 12,
      result: status.result,
    });

    // gzip when asked: the decoded bytes are the plain body, byte for byte.
    const gzipped = await fetchJobReport(api, merchant, jobId, { 'accept-encoding': 'br;q=1, gzip;q=0.8' });
    expect(gzipped.status).toBe(200);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toMatch(/accept-encoding/i);
    expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);
    // gzip;q=0 refuses it.
    const refused = await fetchJobReport(api, merchant, jobId, { 'accept-encoding': 'gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.body.equals(plain.body)).toBe(true);
  });

  it('reports a bulkCancelByQuery as the rewards it cancelled, each with its player, adding up to its count', async () => {
    const rewards = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [
        { playerId: 'q1', externalId: 'q1-a' },
        { playerId: 'q1', externalId: 'q1-used', status: 'USED' },
        { playerId: 'q2' },
        { playerId: 'q3', externalId: 'q3-a' },
      ],
    });
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: ['q1', 'q2', 'nobody'] });
    const status = await waitForJob(api, merchant, jobId);
    const answer = await fetchJobReport(api, merchant, jobId);
    expect(answer.status).toBe(200);
    const report = parseJobReport(answer.body);
    expect(report.checksumHolds).toBe(true);
    const expected = [rewards[0], rewards[2]]
      .map((reward) => ({
        id: reward?.id,
        externalId: reward?.externalId ?? null,
        playerId: reward?.playerId,
        outcome: 'cancelled',
      }))
      .sort((a, b) => ((a.id as string) < (b.id as string) ? -1 : 1));
    expect([...report.lines].sort((a, b) => ((a.id as string) < (b.id as string) ? -1 : 1))).toEqual(expected);
    expect(status.result).toMatchObject({ players: 3, cancelled: 2 });
    expect(report.summary).toMatchObject({
      operation: 'bulkCancelByQuery',
      lines: 2,
      cancelled: 2,
      result: status.result,
    });
  });

  it('a report longer than one read batch comes whole, each reward once, its checksum holding', async () => {
    const many = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: Array.from({ length: 2_500 }, (_, index) => ({
        playerId: `bulk-${index % 7}`,
        externalId: `bulk-${index}`,
      })),
    });
    const missing = Array.from({ length: 2_100 }, (_, index) => `missing-${String(index).padStart(5, '0')}`);
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', {
      ids: many.map((reward) => reward?.id),
      externalIds: missing,
    });
    const status = await waitForJob(api, merchant, jobId, 120_000);
    const gzipped = await fetchJobReport(api, merchant, jobId, { 'accept-encoding': 'gzip' });
    const report = parseJobReport(gunzipSync(gzipped.body));
    expect(report.checksumHolds).toBe(true);
    expect(report.lines).toHaveLength(4_600);
    const ids = report.lines.slice(0, 2_500).map((entry) => entry.id as string);
    expect([...ids].sort()).toEqual(many.map((reward) => reward?.id as string).sort());
    expect(report.lines.slice(2_500).map((entry) => entry.externalId)).toEqual(missing);
    expect(report.summary).toMatchObject({ lines: 4_600, cancelled: 2_500, notFound: 2_100 });
    expect(status.result).toMatchObject({ cancelled: 2_500, notFound: 2_100 });
  }, 180_000);
});
