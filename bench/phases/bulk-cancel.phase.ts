import type pg from 'pg';
import type { BulkCancelRun } from '../figures/bulk-cancel.js';
import { JOB_REWARDS_PATH } from '../lib/api-paths.js';
import { type BookkeepingSize, bookkeepingSize, bytesPer } from '../lib/bookkeeping-size.js';
import { RssSampler } from '../lib/memory-sampler.js';
import { MerchantClient } from '../lib/merchant-client.js';
import type { RunningService } from '../lib/processes.js';
import { sleep } from '../lib/progress.js';
import { TransactionSampler } from '../lib/transaction-sampler.js';
import { measureRawUpdate, measureServiceBulkCancel, playersOf } from './bulk-cancel-runs.js';
import type { TransactionSampling } from './measurements.js';
import type { PhaseKit } from './phase-kit.js';
import { type Phase, phase } from './runner.js';

/** The size of every bulkCancelByQuery phase, for its name. */
function bulkRewards({ context }: PhaseKit): number {
  return context.settings.bulk.players * context.settings.bulk.rewardsPerPlayer;
}

/** One bulk cancel with the worker's longest transaction and RSS sampled throughout. */
export async function sampledBulkCancel(
  { context }: PhaseKit,
  db: pg.Pool,
  worker: RunningService,
  client: MerchantClient,
  players: readonly string[],
  label: string,
): Promise<{ run: BulkCancelRun; transactionSampling: TransactionSampling; peakRss: number | null }> {
  const { settings, environment, checks } = context;
  const transactions = await new TransactionSampler(environment.databaseUrl).start();
  const rss = new RssSampler(worker.pid).start();
  let run: BulkCancelRun | null = null;
  let transactionSampling: TransactionSampling;
  let peakRss: number | null;
  try {
    run = await measureServiceBulkCancel(
      db,
      client,
      players,
      { pollIntervalMs: settings.pollIntervalMs, timeoutMs: settings.runTimeoutMs, label },
      checks,
    );
  } finally {
    transactionSampling = await transactions.stop();
    peakRss = (await rss.stop()).peakMiB;
  }
  return { run, transactionSampling, peakRss };
}

/**
 * The first 1-worker run: its transactions and the worker's memory are sampled throughout (the timed
 * 1-worker runs are the replica comparison's, replicaPhases). Nothing else runs on the machine.
 */
export function sampledOneWorkerPhase(kit: PhaseKit): Phase {
  const { context, measured, main, startApi, startWorker, idleRss } = kit;
  const { progress } = context;
  return phase('bulk', `bulkCancelByQuery, ${bulkRewards(kit)} rewards, 1 worker`, async (db) => {
    const api = await startApi('api-bulk-1-worker');
    const worker = await startWorker('worker-bulk-1-worker');
    const client = new MerchantClient(api.baseUrl, main());
    const players = await playersOf(db, main().id);
    const { memory } = measured;
    memory.idleMiB = await idleRss(worker);
    progress.step(`worker idle RSS ${memory.idleMiB} MiB; bulkCancelByQuery of ${players.length} players, 1 worker`);
    const sizeBefore = await bookkeepingSize(db);
    const { run, transactionSampling, peakRss } = await sampledBulkCancel(kit, db, worker, client, players, '1 worker');
    measured.oneWorker = run;
    measured.bookkeeping.bulk = await bulkBookkeeping(db, client, run, sizeBefore);
    progress.step(
      `1 worker: bookkeeping ${measured.bookkeeping.bulk.writtenBytesPerReward} bytes per reward as written, ` +
        `${measured.bookkeeping.bulk.listedBytesPerReward} once listed`,
    );
    measured.longestTransaction = transactionSampling;
    memory.peak1MMiB = peakRss;
    memory.largeRewards = run.rewards;
    progress.step(
      `1 worker: ${run.serviceMs} ms; longest transaction ${transactionSampling.longestMs} ms; ` +
        `worker RSS peak ${peakRss} MiB`,
    );
  });
}

/** How long the worker may take to list a finished 1,000,000-reward job's slices (~1.4 s per million). */
const LISTING_DEADLINE_MS = 60_000;

/**
 * Bytes of bookkeeping per reward of a finished bulkCancelByQuery: as its statements wrote them (the
 * worker may already be listing a large job's slices by then), then once its rewards are listed: the
 * rewards page answers 409 with Retry-After until the worker has listed every slice, then 200.
 */
async function bulkBookkeeping(db: pg.Pool, client: MerchantClient, run: BulkCancelRun, before: BookkeepingSize) {
  const written = bytesPer(before, await bookkeepingSize(db), run.rewards);
  const deadline = Date.now() + LISTING_DEADLINE_MS;
  let page = await client.post(JOB_REWARDS_PATH, { jobId: run.jobId, limit: 1 });
  while (page.status === 409 && Date.now() < deadline) {
    await sleep(250);
    page = await client.post(JOB_REWARDS_PATH, { jobId: run.jobId, limit: 1 });
  }
  if (page.status !== 200)
    throw new Error(`job rewards of ${run.jobId} answered ${page.status}: ${page.text.slice(0, 300)}`);
  const listed = bytesPer(before, await bookkeepingSize(db), run.rewards);
  return {
    rewards: run.rewards,
    writtenBytesPerReward: written.bytes,
    listedBytesPerReward: listed.bytes,
    webhookBytesPerReward: listed.webhookBytes,
  };
}

/**
 * The raw UPDATE baseline runs as many times as the 1-worker runs it is compared with (the replica
 * comparison's), and the two medians make the ratio: one run of either moves by several per cent, as
 * much as the difference looked for. Then once more also writing a job id on each reward, as the
 * service does.
 */
export function rawUpdatePhases(kit: PhaseKit): Phase[] {
  const { context, measured, main } = kit;
  const { progress, checks } = context;
  const { replicaPairs } = context.settings.bulk;
  const rewards = bulkRewards(kit);
  const runs = Array.from({ length: replicaPairs }, (_, index) => index + 1).map((run) =>
    phase('bulk', `raw UPDATE of the same ${rewards} rewards (${run} of ${replicaPairs})`, async (db) => {
      const players = await playersOf(db, main().id);
      const raw = await measureRawUpdate(db, main().id, players, measured.oneWorker?.rewards ?? null, checks);
      measured.rawRuns.push(raw);
      progress.step(`raw UPDATE: ${raw.rows} rows in ${raw.rawUpdateMs} ms (${raw.plan})`);
    }),
  );
  const withJobId = phase('bulk', `raw UPDATE of the same ${rewards} rewards, also recording a job id`, async (db) => {
    const players = await playersOf(db, main().id);
    const raw = await measureRawUpdate(db, main().id, players, measured.oneWorker?.rewards ?? null, checks, {
      recordJobId: true,
    });
    measured.rawWithJobId = raw;
    progress.step(`raw UPDATE with job id: ${raw.rows} rows in ${raw.rawUpdateMs} ms (${raw.plan})`);
  });
  return [...runs, withJobId];
}

/**
 * 2 replicas against 1: one replica at its default concurrency already keeps Postgres busy on both
 * cores of the bench machine most of the time, so the difference is a few per cent either way, less
 * than two runs of the same setting differ by. So the two settings take turns, each on a fresh copy
 * with processes of their own, and their medians are compared; the 1-worker median is also the one
 * compared with the raw UPDATE's (the sampled 1-worker run is not one of them). Then one more pair with
 * one bulk job at a time per replica (WORKER_BULK_CONCURRENCY=1), where one replica uses one of the
 * database's two cores: what a second replica adds when the database has a core to spare.
 */
export function replicaPhases(kit: PhaseKit): Phase[] {
  const { context, measured, main, startApi, startWorker } = kit;
  const { progress, checks, settings } = context;
  const { replicaPairs } = settings.bulk;
  const { pollIntervalMs, runTimeoutMs: timeoutMs } = settings;
  const planned = [
    ...Array.from({ length: replicaPairs }, (_, index) => ({ pair: index + 1, concurrencyOne: false })),
    { pair: 1, concurrencyOne: true },
  ];
  return planned.flatMap(({ pair, concurrencyOne }) =>
    ([1, 2] as const).map((replicas) => {
      const workers = `${replicas} worker${replicas === 1 ? '' : 's'}`;
      const label = concurrencyOne
        ? `${workers}, 1 bulk job at a time each`
        : `${workers} (replica comparison, ${pair} of ${replicaPairs})`;
      return phase('bulk', `bulkCancelByQuery, ${bulkRewards(kit)} rewards, ${label}`, async (db) => {
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
    }),
  );
}
