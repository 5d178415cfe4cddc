import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { BulkCancelRun, RawUpdateRun } from '../figures/bulk-cancel.js';
import { BULK_CANCEL_BY_QUERY_PATH } from '../lib/api-paths.js';
import { type BookkeepingSize, bookkeepingSize, bytesPer } from '../lib/bookkeeping-size.js';
import type { Checks } from '../lib/checks.js';
import { loadAverage1m } from '../lib/machine.js';
import { RssSampler } from '../lib/memory-sampler.js';
import { MerchantClient } from '../lib/merchant-client.js';
import { round } from '../lib/percentiles.js';
import type { RunningService } from '../lib/processes.js';
import { sleep } from '../lib/progress.js';
import { TransactionSampler } from '../lib/transaction-sampler.js';
import type { TransactionSampling } from './measurements.js';
import type { PhaseKit } from './phase-kit.js';
import { type Phase, phase } from './runner.js';

const JOB_REWARDS_PATH = '/api/v1/integration/jobs/rewards';

/** The merchant's players, as the request names them. */
export async function playersOf(db: pg.Pool, merchantId: string): Promise<string[]> {
  const { rows } = await db.query<{ player_id: string }>(
    'SELECT player_id FROM players WHERE merchant_id = $1 ORDER BY player_id',
    [merchantId],
  );
  return rows.map((row) => row.player_id);
}

async function countActive(db: pg.Pool, merchantId: string, playerIds: readonly string[]): Promise<number> {
  const { rows } = await db.query<{ active: number }>(
    `SELECT count(*)::int AS active FROM rewards WHERE merchant_id = $1 AND player_id = ANY($2::text[]) AND status = 'ACTIVE'`,
    [merchantId, playerIds],
  );
  return rows[0]?.active ?? 0;
}

/**
 * One signed bulkCancelByQuery through the real API and the workers that are running, timed until
 * the signed job status says `completed`; then checked against the database: no targeted reward is
 * still ACTIVE, each was cancelled by this job, and the job's counts equal the rows.
 */
export async function measureServiceBulkCancel(
  db: pg.Pool,
  client: MerchantClient,
  playerIds: readonly string[],
  options: { pollIntervalMs: number; timeoutMs: number; label: string },
  checks: Checks,
): Promise<BulkCancelRun> {
  const { label } = options;
  const merchantId = client.merchant.id;
  const expected = await countActive(db, merchantId, playerIds);

  const sentAt = Date.now();
  const started = performance.now();
  const jobId = await client.enqueue(BULK_CANCEL_BY_QUERY_PATH, { playerIds });
  const acceptMs = performance.now() - started;
  let status = await client.jobStatus(jobId);
  while (status.state !== 'completed' && status.state !== 'failed') {
    if (performance.now() - started > options.timeoutMs) {
      throw new Error(
        `${label}: job ${jobId} not finished after ${options.timeoutMs} ms (${status.state}, ${status.progress} %)`,
      );
    }
    await sleep(options.pollIntervalMs);
    status = await client.jobStatus(jobId);
  }
  const serviceMs = performance.now() - started;
  const ranFrom = performance.timeOrigin + started;
  const seenAt = sentAt + serviceMs;
  if (status.state === 'failed') throw new Error(`${label}: job ${jobId} failed: ${status.error}`);

  const { rows } = await db.query<{ active: number; by_job: number; first: number | null; last: number | null }>(
    `SELECT count(*) FILTER (WHERE status = 'ACTIVE')::int AS active,
            count(*) FILTER (WHERE status = 'CANCELLED' AND cancellation_job_id = $3)::int AS by_job,
            (extract(epoch FROM min(cancelled_at) FILTER (WHERE cancellation_job_id = $3)) * 1000)::float8 AS first,
            (extract(epoch FROM max(cancelled_at) FILTER (WHERE cancellation_job_id = $3)) * 1000)::float8 AS last
     FROM rewards WHERE merchant_id = $1 AND player_id = ANY($2::text[])`,
    [merchantId, playerIds, jobId],
  );
  const row = rows[0];
  let valid = checks.expect(`${label}: rewards to cancel`, expected > 0, `${expected}`);
  valid = checks.equal(`${label}: targeted rewards still ACTIVE`, row?.active, 0) && valid;
  valid = checks.equal(`${label}: rewards cancelled by the job`, row?.by_job, expected) && valid;
  valid = checks.equal(`${label}: job result cancelled`, status.result?.cancelled, expected) && valid;
  valid = checks.equal(`${label}: job result players`, status.result?.players, playerIds.length) && valid;

  const first = row?.first ?? null;
  const last = row?.last ?? null;
  const finishedAt = status.finishedAt;
  const span = (from: number | null, to: number | null) => (from === null || to === null ? null : round(to - from, 0));
  return {
    rewards: expected,
    players: playerIds.length,
    serviceMs: round(serviceMs, 0),
    ranFrom,
    ranTo: ranFrom + serviceMs,
    jobId,
    result: status.result,
    breakdown: {
      acceptMs: round(acceptMs, 0),
      toFirstBatchMs: span(status.createdAt, first),
      batchesMs: span(first, last),
      lastBatchToFinishedMs: span(last, finishedAt),
      pollLagMs: span(finishedAt, seenAt),
    },
    valid,
    loadAverage1m: loadAverage1m(),
  };
}

/**
 * The baseline: one raw UPDATE of the same rows (same merchant, same player array, same
 * `status = 'ACTIVE'` condition), timed from the client, round trip included.
 */
export async function measureRawUpdate(
  db: pg.Pool,
  merchantId: string,
  playerIds: readonly string[],
  expectedRows: number | null,
  checks: Checks,
  options: { recordJobId?: boolean } = {},
): Promise<RawUpdateRun> {
  // With recordJobId the statement writes what the service writes (docs/design.md §4 records the canceller's
  // job id on each reward): the same data change, for context beside the plain baseline.
  const statement = options.recordJobId
    ? "UPDATE rewards SET status = 'CANCELLED', cancelled_at = now(), cancellation_job_id = $3 " +
      "WHERE merchant_id = $1 AND player_id = ANY($2) AND status = 'ACTIVE'"
    : "UPDATE rewards SET status = 'CANCELLED', cancelled_at = now() " +
      "WHERE merchant_id = $1 AND player_id = ANY($2) AND status = 'ACTIVE'";
  const parameters = options.recordJobId ? [merchantId, playerIds, randomUUID()] : [merchantId, playerIds];
  const label = options.recordJobId ? 'raw UPDATE with job id' : 'raw UPDATE';
  const client = await db.connect();
  try {
    const before = await countActive(db, merchantId, playerIds);
    const explained = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${statement}`, parameters);
    const plan = describePlan(explained.rows[0]?.['QUERY PLAN']);
    const started = performance.now();
    const result = await client.query(statement, parameters);
    const rawUpdateMs = performance.now() - started;
    const ranFrom = performance.timeOrigin + started;
    const after = await countActive(db, merchantId, playerIds);
    let valid = checks.equal(`${label}: rows updated = rows ACTIVE before`, result.rowCount, before);
    if (expectedRows !== null) {
      valid =
        checks.equal(`${label}: rows updated = rows the service cancelled`, result.rowCount, expectedRows) && valid;
    }
    valid = checks.equal(`${label}: targeted rewards still ACTIVE`, after, 0) && valid;
    return {
      rows: result.rowCount ?? 0,
      rawUpdateMs: round(rawUpdateMs, 0),
      plan,
      valid,
      ranFrom,
      ranTo: ranFrom + rawUpdateMs,
    };
  } finally {
    client.release();
  }
}

interface PlanNode {
  'Node Type'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function describePlan(explained: unknown): string {
  const root = (explained as Array<{ Plan?: PlanNode }> | undefined)?.[0]?.Plan;
  const parts: string[] = [];
  const walk = (node: PlanNode | undefined) => {
    if (!node) return;
    parts.push(node['Index Name'] ? `${node['Node Type']} (${node['Index Name']})` : String(node['Node Type']));
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(root);
  return parts.join(' → ');
}

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
