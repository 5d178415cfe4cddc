import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createReadRouter } from '../../src/api/api-deps.js';
import { createJobEventHub } from '../../src/api/jobs/events/job-event-hub-wiring.js';
import { createRedis } from '../../src/shared/redis/redis.js';
import { ShardLayout } from '../../src/shared/redis/shards.js';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { Metrics } from '../../src/shared/telemetry/metrics.js';
import { startTestApi } from '../helpers/api.js';
import { cancelPaths, requestCancellation } from '../helpers/cancellation.js';
import { jobEventsQuery, type OpenEventStream, openEventStream } from '../helpers/event-stream.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * GET jobs/events as an attacker or a greedy client sees it: signed like every merchant request, a job of
 * another merchant is unknown, the number of open streams is bounded, and the signature it carries in its
 * URL cannot then be used to cancel.
 */

const eventsPath = '/api/v1/integration/jobs/events';
const PER_MERCHANT = 2;

const { env, api } = useTestContext({
  settings: { JOB_EVENTS_MAX_STREAMS_PER_MERCHANT: String(PER_MERCHANT) },
  api: true,
});
let merchant: MerchantFixture;
let other: MerchantFixture;
let jobId: string;

beforeAll(async () => {
  [merchant, other] = await Promise.all([createMerchant(env.db), createMerchant(env.db)]);
  const configuration = await createConfiguration(env.db, {
    merchantId: merchant.id,
    externalId: 'events-cfg',
    startDate: Date.now(),
  });
  await createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configuration.id,
    rewards: [{ playerId: 'events-p1' }],
  });
  // No worker: the job stays queued, its streams stay open.
  jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: ['events-p1'] });
});

function urlFor(query: string): string {
  return `${api.baseUrl}${eventsPath}?${query}`;
}

describe('who may follow a job', () => {
  it('answers 404 errorCode 10 for a job of another merchant, as for a job that does not exist', async () => {
    for (const query of [jobEventsQuery(other, jobId), jobEventsQuery(merchant, randomUUID())]) {
      const response = await fetch(urlFor(query));
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toEqual({ errorCode: 10, errorMessage: 'Job not found' });
    }
    // A refused stream holds no place under the bound.
    expect(api.deps.jobEvents.openStreams).toBe(0);
  });

  it('answers 401 errorCode 2 for a wrong signature and 400 errorCode 1 for an unsigned request', async () => {
    const query = new URLSearchParams(jobEventsQuery(merchant, jobId));
    query.set(
      'hash',
      (query.get('hash') as string).replace(/^./, (c) => (c === '0' ? '1' : '0')),
    );
    const forged = await fetch(urlFor(query.toString()));
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ errorCode: 2 });
    const signedByOther = new URLSearchParams(jobEventsQuery(other, jobId));
    signedByOther.set('merchantId', merchant.id);
    expect((await fetch(urlFor(signedByOther.toString()))).status).toBe(401);

    const unsigned = await fetch(urlFor(new URLSearchParams({ merchantId: merchant.id, jobId }).toString()));
    expect(unsigned.status).toBe(400);
    expect(await unsigned.json()).toMatchObject({ errorCode: 1 });
  });

  it('binds the triple of its URL on sight: the same signature cannot then cancel', async () => {
    const timestamp = Date.now();
    const stream = await openEventStream(urlFor(jobEventsQuery(merchant, jobId, timestamp)));
    try {
      expect(stream.response.status).toBe(200);
      const replay = await api.post(
        cancelPaths.bulkCancelByQuery,
        signedBody(merchant, { playerIds: ['events-p1'] }, timestamp),
      );
      expect(replay.status).toBe(401);
      expect(await replay.json()).toMatchObject({ errorCode: 2 });
      const abort = await api.post('/api/v1/integration/jobs/cancel', signedBody(merchant, { jobId }, timestamp));
      expect(abort.status).toBe(401);
    } finally {
      await stream.close();
    }
  });
});

describe('bounds', () => {
  it('answers 429 errorCode 7 with Retry-After past the per-merchant bound, and frees a place when a client leaves', async () => {
    await eventually(async () => (api.deps.jobEvents.openStreams === 0 ? true : undefined), { what: 'no stream open' });
    const open: OpenEventStream[] = [];
    try {
      for (let index = 0; index < PER_MERCHANT; index++) {
        const stream = await openEventStream(urlFor(jobEventsQuery(merchant, jobId)));
        expect(stream.response.status).toBe(200);
        open.push(stream);
      }
      const refused = await fetch(urlFor(jobEventsQuery(merchant, jobId)));
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await refused.json()).toMatchObject({ errorCode: 7 });

      // Another merchant has bounds of its own (its answer is its own 404 here, not a 429).
      expect((await fetch(urlFor(jobEventsQuery(other, jobId)))).status).toBe(404);

      await (open.shift() as OpenEventStream).close();
      await eventually(async () => (api.deps.jobEvents.openStreams === PER_MERCHANT - 1 ? true : undefined), {
        what: 'the closed stream to be released',
      });
      const again = await openEventStream(urlFor(jobEventsQuery(merchant, jobId)));
      expect(again.response.status).toBe(200);
      open.push(again);
    } finally {
      await Promise.all(open.map((stream) => stream.close()));
    }
  });

  it('answers 429 errorCode 7 past the per-process bound, whichever merchant asks', async () => {
    const config = { ...env.config, JOB_EVENTS_MAX_STREAMS: 1 };
    const logger = createLogger({ level: config.LOG_LEVEL, name: 'job-events-bound' });
    const redis = createRedis(config, 'producer', 'job-events-bound');
    const reads = createReadRouter(
      config,
      logger,
      new Metrics({ collectDefaults: false, processName: 'api' }),
      env.db,
      undefined,
    );
    const jobEvents = createJobEventHub({ config, logger, redis, shards: new ShardLayout(config), reads });
    const own = await startTestApi(env, { jobEvents });
    const open: OpenEventStream[] = [];
    try {
      const othersJob = await requestCancellation(own, other, 'bulkCancelByQuery', { playerIds: ['nobody'] });
      const first = await openEventStream(`${own.baseUrl}${eventsPath}?${jobEventsQuery(merchant, jobId)}`);
      open.push(first);
      expect(first.response.status).toBe(200);
      const refused = await fetch(`${own.baseUrl}${eventsPath}?${jobEventsQuery(other, othersJob)}`);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ errorCode: 7 });
    } finally {
      await Promise.all(open.map((stream) => stream.close()));
      await own.close();
      await reads.close();
      redis.disconnect();
    }
  });
});
