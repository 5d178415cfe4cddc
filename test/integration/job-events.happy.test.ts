import { beforeAll, describe, expect, it } from 'vitest';
import type { PublicJobStatus } from '../../src/shared/jobs/job-status-schema.js';
import { startTestApi } from '../helpers/api.js';
import { requestCancellation } from '../helpers/cancellation.js';
import { jobEventsQuery, openEventStream, type ReadEvent } from '../helpers/event-stream.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { lockRewards } from '../helpers/row-locks.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startTestWorker } from '../helpers/worker.js';

/**
 * GET /api/v1/integration/jobs/events: a job followed as Server-Sent Events, from its queued state through
 * its progress to the final event named by its end state; resumed with Last-Event-ID; kept open by
 * comment lines; ended when the API process closes.
 */

const eventsPath = '/api/v1/integration/jobs/events';
const HEARTBEAT_MS = 300;

// Above 50 players a job is split into parts of 20 players, run one at a time: progress in fifths.
const { env, api } = useTestContext({
  settings: {
    CANCEL_BATCH_SIZE: '10',
    FANOUT_THRESHOLD: '50',
    FANOUT_CHUNK_SIZE: '20',
    WORKER_BULK_CONCURRENCY: '1',
    JOB_EVENTS_HEARTBEAT_MS: String(HEARTBEAT_MS),
    // Only receiving a request is timed: a stream outlives these by far and is not cut.
    HTTP_REQUEST_TIMEOUT_MS: '1000',
    HTTP_HEADERS_TIMEOUT_MS: '1000',
  },
  api: true,
});
let merchant: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
});

async function rewardsOf(prefix: string, players: number, perPlayer = 10) {
  const configuration = await createConfiguration(env.db, {
    merchantId: merchant.id,
    externalId: `${prefix}-cfg`,
    startDate: Date.now(),
  });
  const playerIds = Array.from({ length: players }, (_, i) => `${prefix}-p${String(i).padStart(3, '0')}`);
  const rewards = await createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configuration.id,
    rewards: playerIds.flatMap((playerId) => Array.from({ length: perPlayer }, () => ({ playerId }))),
  });
  return { playerIds, rewards };
}

function watch(jobId: string, headers: Record<string, string> = {}) {
  return openEventStream(`${api.baseUrl}${eventsPath}?${jobEventsQuery(merchant, jobId)}`, headers);
}

/** The next event that is not a comment line. */
async function nextEvent(stream: Awaited<ReturnType<typeof watch>>, timeoutMs = 10_000): Promise<ReadEvent | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = await stream.next(deadline - Date.now());
    if (event === null || event.comment === undefined) return event;
  }
}

function statusOf(event: ReadEvent | null): PublicJobStatus {
  return JSON.parse(event?.data ?? 'null') as PublicJobStatus;
}

describe('following a bulk job', () => {
  it('shows its progress at most once a second and ends with the final status, then the stream closes', async () => {
    const { playerIds, rewards } = await rewardsOf('follow', 100);
    // The third part (players 40-59) waits on these rows until the stream has shown progress.
    const held = await lockRewards(
      env.databaseUrl,
      rewards.filter((reward) => reward.playerId === playerIds[45]).map((reward) => reward.id),
    );
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
    const stream = await watch(jobId);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const worker = await startTestWorker(env);
    try {
      const first = await nextEvent(stream);
      expect(first).toMatchObject({ event: 'progress' });
      expect(first?.id).toMatch(/^[\w-]{22}$/);
      expect(statusOf(first)).toMatchObject({ jobId, operation: 'bulkCancelByQuery', state: 'queued' });

      const progress: ReadEvent[] = [first as ReadEvent];
      for (;;) {
        const event = await nextEvent(stream);
        expect(event?.event).toBe('progress');
        progress.push(event as ReadEvent);
        if (statusOf(event).state === 'running' && statusOf(event).progress > 0) break;
      }
      await held.release();
      const rest = await stream.rest();
      const final = rest.at(-1);
      expect(final?.event).toBe('completed');
      expect(final?.id).toMatch(/^[\w-]{22}$/);
      expect(statusOf(final ?? null)).toMatchObject({
        jobId,
        state: 'completed',
        progress: 100,
        result: { players: 100, cancelled: 1000 },
      });
      progress.push(...rest.slice(0, -1));
      expect(progress.every((event) => event.event === 'progress')).toBe(true);
      // A second apart when written; read here with the delivery's jitter (an event loop busy with the worker).
      for (let index = 1; index < progress.length; index++) {
        expect((progress[index] as ReadEvent).at - (progress[index - 1] as ReadEvent).at).toBeGreaterThanOrEqual(750);
      }
      // Each event says something new: no two progress events carry the same status.
      expect(new Set(progress.map((event) => event.id)).size).toBe(progress.length);
    } finally {
      await held.release();
      await stream.close();
      await worker.close();
    }
  });

  it('resumes from Last-Event-ID: an unchanged status is not sent again, and after the end the final event comes at once', async () => {
    const { playerIds } = await rewardsOf('resume', 3);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
    const first = await watch(jobId);
    const queued = await nextEvent(first);
    expect(statusOf(queued).state).toBe('queued');
    await first.close();

    // Nothing changed: only comment lines until the job moves.
    const resumed = await watch(jobId, { 'last-event-id': queued?.id as string });
    const quiet = await resumed.next();
    expect(quiet?.comment).toBe('keep-alive');
    const worker = await startTestWorker(env);
    try {
      const rest = await resumed.rest();
      const final = rest.at(-1);
      expect(final?.event).toBe('completed');
      expect(rest.every((event) => event.id !== queued?.id)).toBe(true);

      const started = Date.now();
      const after = await watch(jobId, { 'last-event-id': final?.id as string });
      const events = await after.rest(5_000);
      expect(events).toEqual([expect.objectContaining({ event: 'completed', id: final?.id, data: final?.data })]);
      expect(Date.now() - started).toBeLessThan(HEARTBEAT_MS * 3);
    } finally {
      await resumed.close();
      await worker.close();
    }
  });

  it('keeps an idle stream open with a comment line every heartbeat interval', async () => {
    const { playerIds } = await rewardsOf('heartbeat', 2);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
    const stream = await watch(jobId);
    try {
      expect((await stream.next())?.event).toBe('progress');
      const comments: ReadEvent[] = [];
      while (comments.length < 3) {
        const next = await stream.next(HEARTBEAT_MS * 4);
        expect(next?.comment).toBe('keep-alive');
        comments.push(next as ReadEvent);
      }
      const gap = (comments[2] as ReadEvent).at - (comments[1] as ReadEvent).at;
      expect(gap).toBeGreaterThanOrEqual(HEARTBEAT_MS * 0.8);
      expect(gap).toBeLessThan(HEARTBEAT_MS * 3);
    } finally {
      await stream.close();
    }
  });
});

describe('aborted jobs end their streams', () => {
  it('sends cancelled for a queued bulk job aborted by the merchant', async () => {
    const { playerIds } = await rewardsOf('abort-bulk', 2);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
    const stream = await watch(jobId);
    expect(statusOf(await nextEvent(stream)).state).toBe('queued');
    expect((await api.post('/api/v1/integration/jobs/cancel', signedBody(merchant, { jobId }))).status).toBe(200);
    const final = await nextEvent(stream, 5_000);
    expect(final?.event).toBe('cancelled');
    expect(statusOf(final)).toMatchObject({ jobId, state: 'cancelled' });
    expect(await stream.next()).toBeNull();
  });

  it('sends cancelled for a withdrawn single cancel, of which BullMQ writes no event', async () => {
    const { rewards } = await rewardsOf('abort-single', 1, 1);
    const jobId = await requestCancellation(api, merchant, 'cancel', { id: (rewards[0] as { id: string }).id });
    const stream = await watch(jobId);
    expect(statusOf(await nextEvent(stream))).toMatchObject({ jobId, operation: 'cancel', state: 'queued' });
    expect((await api.post('/api/v1/integration/jobs/cancel', signedBody(merchant, { jobId }))).status).toBe(200);
    const final = await nextEvent(stream, 5_000);
    expect(final?.event).toBe('cancelled');
    expect(statusOf(final)).toMatchObject({ jobId, state: 'cancelled' });
  });
});

describe('shutting down', () => {
  it('ends every open stream when the process closes its streams, and refuses new ones with 503', async () => {
    const own = await startTestApi(env);
    try {
      const { playerIds } = await rewardsOf('shutdown', 2);
      const jobId = await requestCancellation(own, merchant, 'bulkCancelByQuery', { playerIds });
      const url = `${own.baseUrl}${eventsPath}?${jobEventsQuery(merchant, jobId)}`;
      const streams = await Promise.all([openEventStream(url), openEventStream(url)]);
      for (const stream of streams) expect((await stream.next())?.event).toBe('progress');
      expect(own.deps.jobEvents.openStreams).toBe(2);
      await own.deps.jobEvents.close();
      for (const stream of streams) expect(await stream.rest(2_000)).toEqual([]);
      expect(own.deps.jobEvents.openStreams).toBe(0);
      const refused = await fetch(`${own.baseUrl}${eventsPath}?${jobEventsQuery(merchant, jobId)}`);
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ errorCode: 11 });
    } finally {
      await own.close();
    }
  });
});
