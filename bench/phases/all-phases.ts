import { Redis } from 'ioredis';
import pg from 'pg';
import { startRedisServer } from '../../test/helpers/redis-server.js';
import { type FinishedJob, waitForJobs } from '../lib/job-waiter.js';
import { RssSampler } from '../lib/memory-sampler.js';
import { MerchantClient } from '../lib/merchant-client.js';
import { median, ratio } from '../lib/percentiles.js';
import type { RunningService } from '../lib/processes.js';
import { sleep } from '../lib/progress.js';
import {
  ReadAllStreams,
  type StreamRecord,
  type StreamSummary,
  sentBetween,
  summarise,
} from '../lib/read-all-stream.js';
import {
  type BulkCancelResults,
  REDIS_MEMORY_HEADROOM_MIB,
  type RedisMemoryResults,
  type SingleCancelResults,
  type WorkerMemoryResults,
} from '../lib/report.js';
import type { PhaseGroup } from '../lib/settings.js';
import { TransactionSampler } from '../lib/transaction-sampler.js';
import {
  BULK_CANCEL_BY_QUERY_PATH,
  type BulkCancelRun,
  measureRawUpdate,
  measureServiceBulkCancel,
  playersOf,
  type RawUpdateRun,
} from './bulk-cancel.phase.js';
import { type BenchContext, type BenchData, seeded } from './context.js';
import { type FairTurnsRun, measureFairTurns, seedFairTurns } from './fair-turns.phase.js';
import { type HttpResults, measureHttp } from './http.phase.js';
import { measureRedisMemory } from './redis-memory.phase.js';
import {
  activeRewardIds,
  measureSingleCancels,
  type SingleCancelRun,
  warmUpSingleCancels,
} from './single-cancels.phase.js';

interface Measured {
  http: HttpResults | null;
  /** The end-to-end runs of each side. */
  coalesced: SingleCancelRun[];
  oneUpdatePerJob: SingleCancelRun[];
  coalescedDrain: SingleCancelRun | null;
  oneUpdatePerJobDrain: SingleCancelRun | null;
  oneWorker: BulkCancelRun | null;
  /** The replica comparison's runs, in order. */
  replicaRuns: { one: BulkCancelRun[]; two: BulkCancelRun[] };
  /** The same, one pair, with WORKER_BULK_CONCURRENCY=1. */
  replicaScaleOut: { one: BulkCancelRun[]; two: BulkCancelRun[] };
  /** The raw UPDATE, as many runs as the replica comparison has pairs. */
  rawRuns: RawUpdateRun[];
  rawWithJobId: RawUpdateRun | null;
  longestTransaction: TransactionSampling | null;
  underReadLoad: BulkCancelRun | null;
  longestTransactionUnderReadLoad: TransactionSampling | null;
  fairTurns: FairTurnsRun | null;
}

type TransactionSampling = Awaited<ReturnType<TransactionSampler['stop']>>;

export interface PhaseResults {
  bulkCancelByQuery: BulkCancelResults;
  singleCancels: SingleCancelResults;
  http: HttpResults | null;
  workerMemory: WorkerMemoryResults;
  redisMemory: RedisMemoryResults;
  fairTurns: FairTurnsRun | null;
  readAllStream: { idle: StreamSummary | null; during: StreamSummary | null; duringRuns?: number };
  errors: Array<{ phase: string; message: string }>;
}

/**
 * The measurements, in order. Each phase starts from a fresh copy of the seeded database, an empty
 * queue prefix and processes of its own, and stops them at its end, so that one phase's failure is
 * recorded and the next still runs.
 */
export async function runAllPhases(context: BenchContext, data: BenchData): Promise<PhaseResults> {
  const { settings, progress, services, environment, checks } = context;
  const errors: PhaseResults['errors'] = [];
  const measured: Measured = {
    http: null,
    coalesced: [],
    oneUpdatePerJob: [],
    coalescedDrain: null,
    oneUpdatePerJobDrain: null,
    oneWorker: null,
    replicaRuns: { one: [], two: [] },
    replicaScaleOut: { one: [], two: [] },
    rawRuns: [],
    rawWithJobId: null,
    longestTransaction: null,
    underReadLoad: null,
    longestTransactionUnderReadLoad: null,
    fairTurns: null,
  };
  const streams: PhaseResults['readAllStream'] = { idle: null, during: null };
  const memory: WorkerMemoryResults = {
    idleMiB: null,
    peak100kMiB: null,
    peak1MMiB: null,
    smallRewards: null,
    largeRewards: null,
    idleBeforeSmallMiB: null,
  };
  const timeoutMs = settings.runTimeoutMs;
  const pollIntervalMs = settings.pollIntervalMs;

  const phase = async (group: PhaseGroup, name: string, work: (db: pg.Pool) => Promise<void>) => {
    if (context.interrupted() || (settings.only !== null && !settings.only.has(group))) return;
    progress.step(`── ${name}: fresh copy of the seeded database, empty queue prefix`);
    let db: pg.Pool | null = null;
    try {
      await services.stopAll();
      await context.databases.cloneFreshLive();
      await context.queue.deleteAll();
      db = new pg.Pool({ connectionString: environment.databaseUrl, max: 4, application_name: 'rewards-bench' });
      db.on('error', () => {});
      await work(db);
    } catch (error) {
      const message = (error as Error).message;
      errors.push({ phase: name, message });
      checks.expect(`${name} ran to its end`, false, message);
      progress.step(`${name} FAILED: ${message}`);
    } finally {
      await services.stopAll();
      await db?.end();
    }
  };
  // Seeded only when a phase that needs them is selected (`--only`).
  const main = () => seeded(data.main, 'main');
  const memoryMerchant = () => seeded(data.memory, 'worker memory');
  const startApi = (name: string) => services.start('api', name, environment);
  const startWorker = (name: string, extraEnv: Record<string, string> = {}) =>
    services.start('worker', name, environment, extraEnv);
  const idleRss = async (worker: RunningService) => {
    const sampler = new RssSampler(worker.pid).start();
    await sleep(settings.idleMemoryMs);
    return (await sampler.stop()).medianMiB;
  };

  await phase('http', 'HTTP', async () => {
    const api = await startApi('api-http');
    measured.http = await measureHttp(context, api.baseUrl, main());
  });

  // Each end-to-end run is a phase of its own (a fresh copy of the database, new API and worker, their
  // warm-up), the two sides taking turns, and the medians make the ratio: the one-UPDATE-per-job side
  // moved between 12 and 19 s from run to run, and on one copy it slowed with every run (11.8, 13.5,
  // 15.4 s) as its table took the earlier runs' updates. The last run of each side also times the
  // workers alone, on the copy's other half of the rewards.
  const { requests, runs } = settings.singles;
  const singlesConnections = settings.singles.connections;
  const singleCancelSides = [
    { side: 'coalesced', merchant: () => seeded(data.singles, 'single cancels'), env: {} },
    {
      side: 'one UPDATE per job',
      merchant: () => seeded(data.singlesBaseline, 'single cancels baseline'),
      env: { COALESCE_MAX_BATCH: '1' },
    },
  ] as const;
  for (let index = 1; index <= runs; index++) {
    for (const { side, merchant: sideMerchant, env } of singleCancelSides) {
      const label = `${side}, ${index} of ${runs}`;
      await phase('singles', `single cancels, ${label}`, async (db) => {
        const merchant = sideMerchant();
        const name = `singles-${side.replaceAll(' ', '-')}-${index}`;
        const api = await startApi(`api-${name}`);
        await startWorker(`worker-${name}`, env);
        const ids = await activeRewardIds(db, merchant.id);
        if (ids.length !== 2 * requests)
          throw new Error(`${label}: ${ids.length} rewards seeded, ${2 * requests} needed`);
        const options = {
          connections: singlesConnections,
          pollIntervalMs,
          timeoutMs,
          label: `single cancels, ${label}`,
        };
        const warmUp = Math.round(requests / 4);
        progress.step(`single cancels (${label}): warm-up, ${warmUp} cancels of rewards that do not exist`);
        await warmUpSingleCancels(db, api.baseUrl, merchant, warmUp, options, checks);
        progress.step(`single cancels (${label}): ${requests} requests at -c ${singlesConnections}, end to end`);
        const endToEnd = await measureSingleCancels(db, api.baseUrl, merchant, ids.slice(0, requests), options, checks);
        (side === 'coalesced' ? measured.coalesced : measured.oneUpdatePerJob).push(endToEnd);
        progress.step(`single cancels (${label}): ${endToEnd.ms} ms (all accepted after ${endToEnd.acceptMs} ms)`);
        if (index < runs) return;
        const drain = await measureSingleCancels(
          db,
          api.baseUrl,
          merchant,
          ids.slice(requests),
          {
            ...options,
            label: `single cancels, ${side}, workers alone`,
            pauseQueue: (paused) => context.queue.setSingleCancelQueuePaused(paused),
          },
          checks,
        );
        if (side === 'coalesced') measured.coalescedDrain = drain;
        else measured.oneUpdatePerJobDrain = drain;
        progress.step(`single cancels (${side}): workers alone, from ${requests} jobs stored: ${drain.ms} ms`);
      });
    }
  }

  const bulkRewards = settings.bulk.players * settings.bulk.rewardsPerPlayer;
  /** One bulk cancel with the worker's longest transaction and RSS sampled throughout. */
  const sampledBulkCancel = async (
    db: pg.Pool,
    worker: RunningService,
    client: MerchantClient,
    players: readonly string[],
    label: string,
  ) => {
    const transactions = await new TransactionSampler(environment.databaseUrl).start();
    const rss = new RssSampler(worker.pid).start();
    let run: BulkCancelRun | null = null;
    let transactionSampling: TransactionSampling;
    let peakRss: number | null;
    try {
      run = await measureServiceBulkCancel(db, client, players, { pollIntervalMs, timeoutMs, label }, checks);
    } finally {
      transactionSampling = await transactions.stop();
      peakRss = (await rss.stop()).peakMiB;
    }
    return { run, transactionSampling, peakRss };
  };

  // The first 1-worker run: its transactions and the worker's memory are sampled throughout (the
  // timed 1-worker runs are the replica comparison's, below). Nothing else runs on the machine.
  await phase('bulk', `bulkCancelByQuery, ${bulkRewards} rewards, 1 worker`, async (db) => {
    const api = await startApi('api-bulk-1-worker');
    const worker = await startWorker('worker-bulk-1-worker');
    const client = new MerchantClient(api.baseUrl, main());
    const players = await playersOf(db, main().id);
    memory.idleMiB = await idleRss(worker);
    progress.step(`worker idle RSS ${memory.idleMiB} MiB; bulkCancelByQuery of ${players.length} players, 1 worker`);
    const { run, transactionSampling, peakRss } = await sampledBulkCancel(db, worker, client, players, '1 worker');
    measured.oneWorker = run;
    measured.longestTransaction = transactionSampling;
    memory.peak1MMiB = peakRss;
    memory.largeRewards = run.rewards;
    progress.step(
      `1 worker: ${run.serviceMs} ms; longest transaction ${transactionSampling.longestMs} ms; ` +
        `worker RSS peak ${peakRss} MiB`,
    );
  });

  /**
   * The API and worker of each run are new processes: their first bulk cancel runs cold code (the
   * validation of 10,000 player ids alone takes ~15 ms before V8 optimises it, ~1.5 ms after), which a
   * production process met long ago. One cancel of as many players that have no rewards, while the
   * stream warms up, takes both through the same route and job first; it changes no reward.
   */
  const warmUpBulkCancel = async (client: MerchantClient, players: readonly string[], label: string) => {
    const jobId = await client.enqueue(BULK_CANCEL_BY_QUERY_PATH, {
      playerIds: players.map((player) => `${player}-warm-up`),
    });
    const finished = await waitForJobs(client, [jobId], { pollIntervalMs, timeoutMs, label: 'warm-up bulk cancel' });
    const { status } = finished.get(jobId) as FinishedJob;
    checks.expect(
      `warm-up bulk cancel (${label}): completed, nothing cancelled`,
      status.state === 'completed' && status.result?.cancelled === 0,
      `${status.state}, ${status.result?.cancelled} cancelled`,
    );
  };

  // The readAll stream costs CPU the timed runs must not lose, so it gets runs of its own. A cancel lasts
  // about 2 s or less, ~70 requests of the stream: a p99 of those would be their slowest one, against the idle
  // stream's 4th slowest of ~400. So the cancel runs `cancelRuns` times (each on a fresh copy) and the
  // answers during them are pooled, for a p99 over as many answers as the idle one.
  const { connections, requestsPerSecond, warmupMs, idleMs, cancelRuns } = settings.readAllStream;
  const duringRecords: StreamRecord[] = [];
  const readAllClient = settings.only === null || settings.only.has('bulk') ? ReadAllStreams.open() : null;
  for (let runIndex = 0; readAllClient && runIndex < cancelRuns; runIndex++) {
    const label = `${runIndex + 1} of ${cancelRuns}`;
    await phase(
      'bulk',
      `bulkCancelByQuery, ${bulkRewards} rewards, 1 worker, with a readAll stream (${label})`,
      async (db) => {
        const api = await startApi(`api-bulk-read-load-${runIndex + 1}`);
        const worker = await startWorker(`worker-bulk-read-load-${runIndex + 1}`);
        const client = new MerchantClient(api.baseUrl, main());
        const players = await playersOf(db, main().id);
        const stream = () =>
          readAllClient.start({ baseUrl: api.baseUrl, merchant: main(), connections, requestsPerSecond });
        const warmup = await stream();
        await Promise.all([sleep(warmupMs), warmUpBulkCancel(client, players, label)]);
        await warmup.stop();
        if (runIndex === 0) {
          progress.step(`readAll stream (${connections} in flight, ${requestsPerSecond}/s), idle`);
          const idleStream = await stream();
          await sleep(idleMs);
          streams.idle = summarise([await idleStream.stop()]);
        }

        progress.step(`readAll stream during a bulkCancelByQuery of ${players.length} players, 1 worker (${label})`);
        const duringStream = await stream();
        let sampled: Awaited<ReturnType<typeof sampledBulkCancel>>;
        let during: StreamRecord;
        try {
          sampled = await sampledBulkCancel(db, worker, client, players, `1 worker, readAll stream (${label})`);
        } finally {
          during = await duringStream.stop();
        }
        // Only the requests sent while the cancel ran: the stream is opened before the bench counts the
        // rewards to cancel and closed after it has checked them, queries over the same million rows.
        during = sentBetween(during, sampled.run.ranFrom, sampled.run.ranTo);
        duringRecords.push(during);
        if (runIndex === 0 || !sampled.run.valid) measured.underReadLoad = sampled.run;
        const longest = measured.longestTransactionUnderReadLoad;
        if (!longest || (sampled.transactionSampling.longestMs ?? 0) > (longest.longestMs ?? 0)) {
          measured.longestTransactionUnderReadLoad = sampled.transactionSampling;
        }
        const thisRun = summarise([during]);
        progress.step(
          `with readAll stream (${label}): ${sampled.run.serviceMs} ms; ${thisRun.requests} readAll answers, ` +
            `p50 ${thisRun.p50Ms} ms, slowest ${thisRun.maxMs} ms; longest transaction ${sampled.transactionSampling.longestMs} ms`,
        );
      },
    );
  }
  await readAllClient?.close();
  if (duringRecords.length > 0) {
    streams.during = summarise(duringRecords);
    streams.duringRuns = duringRecords.length;
    for (const [name, summary] of [
      ['idle', streams.idle],
      ['during', streams.during],
    ] as const) {
      if (!summary) continue;
      checks.expect(
        `readAll stream ${name}: no errors`,
        summary.errors === 0,
        `${summary.requests} requests, ${summary.errors} errors${summary.firstError ? `: ${summary.firstError}` : ''}`,
      );
    }
    progress.step(
      `readAll p99 ${streams.idle?.p99Ms} ms idle (${streams.idle?.requests} answers), ` +
        `${streams.during.p99Ms} ms during ${duringRecords.length} cancels (${streams.during.requests} answers)`,
    );
  }

  // The baseline runs as many times as the 1-worker runs it is compared with (the replica comparison's,
  // below), and the two medians make the ratio: one run of either moves by ±8 %.
  const { replicaPairs } = settings.bulk;
  for (let run = 1; run <= replicaPairs; run++) {
    await phase('bulk', `raw UPDATE of the same ${bulkRewards} rewards (${run} of ${replicaPairs})`, async (db) => {
      const players = await playersOf(db, main().id);
      const raw = await measureRawUpdate(db, main().id, players, measured.oneWorker?.rewards ?? null, checks);
      measured.rawRuns.push(raw);
      progress.step(`raw UPDATE: ${raw.rows} rows in ${raw.rawUpdateMs} ms (${raw.plan})`);
    });
  }

  await phase('bulk', `raw UPDATE of the same ${bulkRewards} rewards, also recording a job id`, async (db) => {
    const players = await playersOf(db, main().id);
    const raw = await measureRawUpdate(db, main().id, players, measured.oneWorker?.rewards ?? null, checks, {
      recordJobId: true,
    });
    measured.rawWithJobId = raw;
    progress.step(`raw UPDATE with job id: ${raw.rows} rows in ${raw.rawUpdateMs} ms (${raw.plan})`);
  });

  // 2 replicas against 1: on this machine one replica at its default concurrency already keeps
  // Postgres busy on both cores most of the time, so the difference is a few per cent either way, less
  // than two runs of the same setting differ by. So the two settings take turns, each on a fresh copy
  // with processes of their own, and their medians are compared; the 1-worker median is also the one
  // compared with the raw UPDATE's (the first 1-worker run above samples transactions and memory, so it
  // is not one of them). Then one more pair with one bulk job at a time per replica
  // (WORKER_BULK_CONCURRENCY=1), where one replica uses one of the database's two cores: what a second
  // replica adds when the database has a core to spare.
  const replicaRunsPlanned = [
    ...Array.from({ length: replicaPairs }, (_, index) => ({ pair: index + 1, concurrencyOne: false })),
    { pair: 1, concurrencyOne: true },
  ];
  for (const { pair, concurrencyOne } of replicaRunsPlanned) {
    for (const replicas of [1, 2] as const) {
      const workers = `${replicas} worker${replicas === 1 ? '' : 's'}`;
      const label = concurrencyOne
        ? `${workers}, 1 bulk job at a time each`
        : `${workers} (replica comparison, ${pair} of ${replicaPairs})`;
      await phase('bulk', `bulkCancelByQuery, ${bulkRewards} rewards, ${label}`, async (db) => {
        const name = `bulk-replicas-${concurrencyOne ? 'concurrency-1' : pair}-${replicas}`;
        const api = await startApi(`api-${name}`);
        const extraEnv: Record<string, string> = concurrencyOne ? { WORKER_BULK_CONCURRENCY: '1' } : {};
        await Promise.all(
          Array.from({ length: replicas }, (_, index) => startWorker(`worker-${name}-${'ab'[index]}`, extraEnv)),
        );
        const client = new MerchantClient(api.baseUrl, main());
        const players = await playersOf(db, main().id);
        progress.step(`bulkCancelByQuery of ${players.length} players through the API and ${label}`);
        const run = await measureServiceBulkCancel(db, client, players, { pollIntervalMs, timeoutMs, label }, checks);
        const runs = concurrencyOne ? measured.replicaScaleOut : measured.replicaRuns;
        runs[replicas === 1 ? 'one' : 'two'].push(run);
        progress.step(`${label}: ${run.serviceMs} ms`);
      });
    }
  }

  const smallRewards = settings.memorySmall.players * settings.memorySmall.rewardsPerPlayer;
  await phase('worker-memory', `worker memory, ${smallRewards} rewards`, async (db) => {
    const api = await startApi('api-memory-small');
    const worker = await startWorker('worker-memory-small');
    const client = new MerchantClient(api.baseUrl, memoryMerchant());
    const players = await playersOf(db, memoryMerchant().id);
    memory.idleBeforeSmallMiB = await idleRss(worker);
    const rss = new RssSampler(worker.pid).start();
    let run: BulkCancelRun | null = null;
    try {
      run = await measureServiceBulkCancel(
        db,
        client,
        players,
        { pollIntervalMs, timeoutMs, label: 'memory, small run' },
        checks,
      );
    } finally {
      memory.peak100kMiB = (await rss.stop()).peakMiB;
    }
    memory.smallRewards = run.rewards;
    progress.step(
      `small run: ${run.serviceMs} ms, worker RSS idle ${memory.idleBeforeSmallMiB} MiB, peak ${memory.peak100kMiB} MiB`,
    );
  });

  // On a redis-server of its own: other work on the shared Redis would move used_memory by more than
  // the figure measured. The per-merchant cap is raised so that none of the requests is refused.
  const redisMemoryEnv = { MAX_QUEUED_JOBS: String(settings.redisMemory.maxQueuedJobs) };
  const redisMemory: RedisMemoryResults = {
    run: null,
    serviceEnv: redisMemoryEnv,
    workerBulkConcurrency: settings.serviceEnv.WORKER_BULK_CONCURRENCY ?? 'default',
  };
  const { requests: redisRequests, idsPerRequest } = settings.redisMemory;
  await phase(
    'redis-memory',
    `Redis memory, ${redisRequests} bulkCancel requests of ${idsPerRequest} ids`,
    async () => {
      const server = await startRedisServer();
      const redis = new Redis(server.url, { maxRetriesPerRequest: 2, connectionName: 'rewards-bench' });
      redis.on('error', () => {});
      try {
        const ownRedis = { ...environment, redisUrl: server.url };
        progress.step(
          `own redis-server on port ${server.port}; API and 1 worker with ${JSON.stringify(redisMemoryEnv)}`,
        );
        const api = await services.start('api', 'api-redis-memory', ownRedis, redisMemoryEnv);
        await services.start('worker', 'worker-redis-memory', ownRedis, redisMemoryEnv);
        const client = new MerchantClient(api.baseUrl, seeded(data.redisMemory, 'Redis memory'));
        const run = await measureRedisMemory(
          client,
          redis,
          {
            ...settings.redisMemory,
            queuePrefix: environment.queuePrefix,
            pollIntervalMs,
            timeoutMs,
            reportEvery: Math.max(1, Math.round(redisRequests / 10)),
            onProgress: (message) => progress.step(message),
          },
          checks,
        );
        redisMemory.run = run;
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
    },
  );

  const fairSizes = settings.fairTurns;
  await phase(
    'fair-turns',
    `fair turns: ${fairSizes.jobs} bulkCancelByQuery jobs of ${fairSizes.playersPerJob} players, then another merchant's bulkCancel`,
    async (db) => {
      const merchantA = seeded(data.tenantA, 'fair turns A');
      const merchantB = seeded(data.tenantB, 'fair turns B');
      const aRewards = fairSizes.jobs * fairSizes.playersPerJob * fairSizes.rewardsPerPlayer;
      progress.step(`inserting ${aRewards} rewards of merchant A and ${fairSizes.bIds} of merchant B`);
      await seedFairTurns(db, merchantA, merchantB, fairSizes);
      const api = await startApi('api-fair-turns');
      await startWorker('worker-fair-turns');
      const run = await measureFairTurns(
        db,
        new MerchantClient(api.baseUrl, merchantA),
        new MerchantClient(api.baseUrl, merchantB),
        fairSizes,
        { pollIntervalMs, timeoutMs },
        checks,
      );
      measured.fairTurns = run;
      progress.step(
        `fair turns: B completed ${run.bLatencyMs} ms after its request (${run.aJobsFinishedBeforeB} of A's jobs ` +
          `finished before it); A's ${run.jobs} jobs took ${run.aJobsMs} ms`,
      );
    },
  );

  const { oneWorker, replicaRuns, rawRuns, coalesced, oneUpdatePerJob, longestTransaction } = measured;
  // A median or a verdict over repeated runs only when every run planned was made.
  const medianOf = (values: readonly number[], planned: number) => (values.length === planned ? median(values) : null);
  const allValid = (runs: readonly { valid: boolean }[], planned: number) =>
    runs.length === planned && runs.every((run) => run.valid);
  const { replicaPairs: bulkRuns } = settings.bulk;
  const replicaMedian = (runs: readonly BulkCancelRun[]) =>
    medianOf(
      runs.map((run) => run.serviceMs),
      bulkRuns,
    );
  const { coalescedDrain, oneUpdatePerJobDrain, underReadLoad, longestTransactionUnderReadLoad } = measured;
  // The longest transaction of either 1-worker run: with and without the readAll stream.
  const longestTransactions = [longestTransaction, longestTransactionUnderReadLoad].flatMap((sampling) =>
    sampling ? [sampling.longestMs] : [],
  );
  const serviceMs = replicaMedian(replicaRuns.one);
  const rawUpdateMs = medianOf(
    rawRuns.map((run) => run.rawUpdateMs),
    bulkRuns,
  );
  const singlesMedian = (side: readonly SingleCancelRun[]) =>
    medianOf(
      side.map((run) => run.ms),
      settings.singles.runs,
    );
  const coalescedMs = singlesMedian(coalesced);
  const oneUpdatePerJobMs = singlesMedian(oneUpdatePerJob);
  const { idle, during } = streams;
  return {
    bulkCancelByQuery: {
      rewards: oneWorker?.rewards ?? null,
      players: oneWorker?.players ?? null,
      serviceMs,
      rawUpdateMs,
      runs: settings.bulk.replicaPairs,
      serviceRunsMs: replicaRuns.one.map((run) => run.serviceMs),
      rawUpdateRunsMs: rawRuns.map((run) => run.rawUpdateMs),
      sampledRunMs: oneWorker?.serviceMs ?? null,
      ratio: ratio(serviceMs, rawUpdateMs),
      rawUpdateWithJobIdMs: measured.rawWithJobId?.rawUpdateMs ?? null,
      ratioToSameWrite: ratio(serviceMs, measured.rawWithJobId?.rawUpdateMs ?? null),
      twoWorkersMs: replicaMedian(replicaRuns.two),
      scaleOutAtConcurrencyOne: {
        oneWorkerMs: measured.replicaScaleOut.one[0]?.serviceMs ?? null,
        twoWorkersMs: measured.replicaScaleOut.two[0]?.serviceMs ?? null,
      },
      longestTransactionMs: longestTransactions.length > 0 ? Math.max(...longestTransactions) : null,
      readAllP99IdleMs: idle?.errors === 0 ? idle.p99Ms : null,
      readAllP99DuringMs: during?.errors === 0 ? during.p99Ms : null,
      valid: {
        oneWorker: (oneWorker?.valid ?? false) && allValid(replicaRuns.one, bulkRuns),
        withReadAllStream: underReadLoad?.valid ?? false,
        rawUpdate: allValid(rawRuns, bulkRuns),
        twoWorkers: allValid(replicaRuns.two, bulkRuns),
      },
      details: {
        sampledOneWorker: oneWorker,
        replicaComparison: replicaRuns,
        replicaScaleOutAtConcurrencyOne: measured.replicaScaleOut,
        rawUpdate: rawRuns,
        rawUpdateWithJobId: measured.rawWithJobId,
        oneWorkerWithReadAllStream: underReadLoad,
        transactionSampling: { oneWorker: longestTransaction, withReadAllStream: longestTransactionUnderReadLoad },
      },
    },
    singleCancels: {
      requests: settings.singles.requests,
      coalescedMs,
      oneUpdatePerJobMs,
      speedup: ratio(oneUpdatePerJobMs, coalescedMs, 2),
      runs: settings.singles.runs,
      coalescedRunsMs: coalesced.map((run) => run.ms),
      oneUpdatePerJobRunsMs: oneUpdatePerJob.map((run) => run.ms),
      valid: {
        coalesced: allValid(coalesced, settings.singles.runs),
        oneUpdatePerJob: allValid(oneUpdatePerJob, settings.singles.runs),
      },
      workersAlone: {
        coalescedMs: coalescedDrain?.ms ?? null,
        oneUpdatePerJobMs: oneUpdatePerJobDrain?.ms ?? null,
        speedup: ratio(oneUpdatePerJobDrain?.ms, coalescedDrain?.ms, 2),
        valid: (coalescedDrain?.valid ?? false) && (oneUpdatePerJobDrain?.valid ?? false),
      },
      rawAcceptBound: rawAcceptBound(settings.singles.requests, measured.http, oneUpdatePerJobMs),
      details: { coalesced, oneUpdatePerJob, coalescedDrain, oneUpdatePerJobDrain },
    },
    http: measured.http,
    workerMemory: memory,
    redisMemory,
    fairTurns: measured.fairTurns,
    readAllStream: streams,
    errors,
  };
}

/** See SingleCancelResults.rawAcceptBound. */
function rawAcceptBound(requests: number, http: HttpResults | null, oneUpdatePerJobMs: number | null) {
  const rps = http?.pairs.cancel.baseline.rps ?? null;
  const ms = rps ? Math.round((requests / rps) * 1_000) : null;
  return { ms, speedup: ratio(oneUpdatePerJobMs, ms, 2) };
}
