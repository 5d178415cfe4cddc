import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { queueNames } from '../../src/shared/redis/redis-keys.js';
import { startRedisServer } from '../../test/helpers/redis-server.js';
import { REDIS_MEMORY_HEADROOM_MIB, type RedisMemoryRun } from '../figures/redis-memory.js';
import { BULK_CANCEL_PATH } from '../lib/api-paths.js';
import type { Checks } from '../lib/checks.js';
import { waitForJobs } from '../lib/job-waiter.js';
import { loadAverage1m } from '../lib/machine.js';
import { MerchantClient, signedBody } from '../lib/merchant-client.js';
import { round } from '../lib/percentiles.js';
import { pollUntil } from '../lib/progress.js';
import { RedisMemorySampler, redisMemoryMiB, settledRedisMemoryMiB } from '../lib/redis-memory-sampler.js';
import { seeded } from './context.js';
import { redisMemoryEnv } from './measurements.js';
import type { PhaseKit } from './phase-kit.js';
import { type Phase, phase } from './runner.js';

/** A finished job keeps only who asked and its counts; anything larger still holds identifiers. */
const FORGOTTEN_DATA_MAX_BYTES = 4_096;
const IDENTIFIERS_DROPPED_TIMEOUT_MS = 30_000;

interface RedisMemoryOptions {
  requests: number;
  idsPerRequest: number;
  idLength: number;
  concurrency: number;
  queuePrefix: string;
  pollIntervalMs: number;
  timeoutMs: number;
  /** Progress line every this many requests sent. */
  reportEvery: number;
  onProgress: (message: string) => void;
}

/**
 * On a redis-server of its own: other work on the shared Redis would move used_memory by more than the
 * figure measured. The per-merchant cap is raised so that none of the requests is refused.
 */
export function redisMemoryPhase({ context, data, measured }: PhaseKit): Phase {
  const { settings, progress, checks, services, environment } = context;
  const serviceEnv = redisMemoryEnv(settings);
  const { requests, idsPerRequest } = settings.redisMemory;
  return phase('redis-memory', `Redis memory, ${requests} bulkCancel requests of ${idsPerRequest} ids`, async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url, { maxRetriesPerRequest: 2, connectionName: 'rewards-bench' });
    redis.on('error', () => {});
    try {
      const ownRedis = { ...environment, redisUrl: server.url };
      progress.step(`own redis-server on port ${server.port}; API and 1 worker with ${JSON.stringify(serviceEnv)}`);
      const api = await services.start('api', 'api-redis-memory', ownRedis, serviceEnv);
      await services.start('worker', 'worker-redis-memory', ownRedis, serviceEnv);
      const client = new MerchantClient(api.baseUrl, seeded(data.redisMemory, 'Redis memory'));
      const run = await measureRedisMemory(
        client,
        redis,
        {
          ...settings.redisMemory,
          queuePrefix: environment.queuePrefix,
          pollIntervalMs: settings.pollIntervalMs,
          timeoutMs: settings.runTimeoutMs,
          reportEvery: Math.max(1, Math.round(requests / 10)),
          onProgress: (message) => progress.step(message),
        },
        checks,
      );
      measured.redisMemory.run = run;
      // At a smoke run's size a job keeping its identifiers would already cost more than the headroom.
      if (settings.quick) {
        checks.expect(
          `Redis memory: after ≤ before + ${REDIS_MEMORY_HEADROOM_MIB} MiB`,
          run.deltaMiB <= REDIS_MEMORY_HEADROOM_MIB,
          `${run.beforeMiB} → ${run.afterMiB} MiB (Δ ${run.deltaMiB} MiB)`,
        );
      }
      progress.step(
        `Redis used_memory before ${run.beforeMiB} MiB, peak ${run.peakMiB} MiB, after ${run.afterMiB} MiB ` +
          `(Δ ${run.deltaMiB} MiB); sent in ${run.sendMs} ms (${run.retries} sent again after a 503/429), ` +
          `all completed after ${run.completedMs} ms`,
      );
    } finally {
      await services.stopAll();
      redis.disconnect();
      await server.stop();
    }
  });
}

/** `count` random identifiers of `length` URL-safe characters: none exists, so each is "not found". */
function randomIdentifiers(count: number, length: number): string[] {
  const text = randomBytes(Math.ceil((count * length * 3) / 4)).toString('base64url');
  return Array.from({ length: count }, (_, index) => text.slice(index * length, (index + 1) * length));
}

/**
 * `requests` signed bulkCancel requests of random, never-found external ids through the running API
 * and worker, `concurrency` in flight; Redis `used_memory` before, sampled throughout, and after every
 * job has completed (and dropped its identifiers, which the worker does just after completing it).
 * `redis` is a connection to the Redis the services use, which nothing else may use during the run.
 */
async function measureRedisMemory(
  client: MerchantClient,
  redis: Redis,
  options: RedisMemoryOptions,
  checks: Checks,
): Promise<RedisMemoryRun> {
  const { requests, idsPerRequest, idLength, concurrency } = options;
  const label = 'Redis memory';
  const bodyBytes = Buffer.byteLength(
    JSON.stringify(signedBody(client.merchant, { externalIds: randomIdentifiers(idsPerRequest, idLength) })),
  );
  const beforeMiB = await settledRedisMemoryMiB(redis);
  options.onProgress(`Redis used_memory before: ${beforeMiB} MiB; sending ${requests} requests of ${bodyBytes} bytes`);

  const sampler = new RedisMemorySampler(redis).start();
  const jobIds: string[] = new Array(requests);
  let retries = 0;
  const started = performance.now();
  let sendMs: number;
  let completedMs: number;
  let sampled: Awaited<ReturnType<RedisMemorySampler['stop']>>;
  let finished: Awaited<ReturnType<typeof waitForJobs>>;
  try {
    let next = 0;
    let sent = 0;
    const sender = async () => {
      for (let index = next++; index < requests; index = next++) {
        const accepted = await client.enqueueRetrying(BULK_CANCEL_PATH, {
          externalIds: randomIdentifiers(idsPerRequest, idLength),
        });
        jobIds[index] = accepted.jobId;
        retries += accepted.retries;
        sent += 1;
        if (sent % options.reportEvery === 0) options.onProgress(`${label}: ${sent} of ${requests} requests accepted`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, requests) }, sender));
    sendMs = performance.now() - started;
    finished = await waitForJobs(client, jobIds, {
      pollIntervalMs: options.pollIntervalMs,
      timeoutMs: options.timeoutMs,
      label,
    });
    completedMs = performance.now() - started;
  } finally {
    sampled = await sampler.stop();
  }

  let exact = 0;
  let firstWrong: string | null = null;
  for (const jobId of jobIds) {
    const status = finished.get(jobId)?.status;
    const result = status?.result;
    const ok =
      status?.state === 'completed' &&
      result?.requested === idsPerRequest &&
      result.notFound === idsPerRequest &&
      result.cancelled === 0;
    if (ok) exact += 1;
    else firstWrong ??= `${jobId}: ${status?.state} ${JSON.stringify(result ?? null)} ${status?.error ?? ''}`;
  }
  let valid = checks.expect(
    `${label}: jobs completed with requested ${idsPerRequest} and notFound ${idsPerRequest}`,
    exact === requests,
    `${exact} of ${requests}${firstWrong ? `; first other: ${firstWrong}` : ''}`,
  );

  // The worker drops a job's identifiers just after completing it; "after" is once that has happened.
  const droppedStarted = performance.now();
  let identifiersDroppedMs: number | null = null;
  const queue = new Queue(queueNames.bulk, { connection: redis, prefix: options.queuePrefix });
  try {
    await pollUntil(
      async () => {
        for (const jobId of jobIds) {
          const job = await queue.getJob(jobId);
          if (job && JSON.stringify(job.data).length > FORGOTTEN_DATA_MAX_BYTES) return undefined;
        }
        return true;
      },
      {
        intervalMs: 200,
        timeoutMs: IDENTIFIERS_DROPPED_TIMEOUT_MS,
        what: 'every finished job to drop its identifiers',
      },
    );
    identifiersDroppedMs = round(performance.now() - droppedStarted, 0);
  } catch (error) {
    valid = checks.expect(`${label}: identifiers dropped from every finished job`, false, (error as Error).message);
  } finally {
    await queue.close();
  }
  const afterMiB = await settledRedisMemoryMiB(redis);
  const serverPeakMiB = round(await redisMemoryMiB(redis, 'used_memory_peak'), 2);
  return {
    requests,
    idsPerRequest,
    idLength,
    bodyBytes,
    beforeMiB,
    peakMiB: sampled.peakMiB,
    peakSamples: sampled.samples,
    serverPeakMiB,
    afterMiB,
    deltaMiB: round(afterMiB - beforeMiB, 2),
    sendMs: round(sendMs, 0),
    retries,
    completedMs: round(completedMs, 0),
    identifiersDroppedMs,
    valid,
    loadAverage1m: loadAverage1m(),
  };
}
