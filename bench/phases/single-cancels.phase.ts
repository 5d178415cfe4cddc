import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { SingleCancelRun } from '../figures/single-cancels.js';
import { CANCEL_PATH } from '../lib/api-paths.js';
import { bookkeepingSize, bytesPer } from '../lib/bookkeeping-size.js';
import type { Checks } from '../lib/checks.js';
import type { LoadFigures } from '../lib/http-load.js';
import { signedBody } from '../lib/merchant-client.js';
import { round } from '../lib/percentiles.js';
import { pollUntil } from '../lib/progress.js';
import { sendRequests } from '../lib/request-sender.js';
import type { SeededMerchant } from '../lib/seed.js';
import { seeded } from './context.js';
import type { PhaseKit } from './phase-kit.js';
import { type Phase, phase } from './runner.js';

interface SingleCancelOptions {
  connections: number;
  pollIntervalMs: number;
  timeoutMs: number;
  label: string;
  /**
   * Set: time the workers alone. The queue is paused while every request is sent and answered, and
   * the clock starts when it is resumed.
   */
  pauseQueue?: (paused: boolean) => Promise<void>;
}

/** How many of the last requests sent the end-to-end poll looks up before it counts them all. */
const LAST_SENT_PROBE = 200;

/**
 * Each end-to-end run is a phase of its own (a fresh copy of the database, new API and worker, their
 * warm-up), the two sides taking turns, and the medians make the ratio: one run of a side moves by more
 * than the sides differ by, and a side run again and again on one copy slows as its table takes the
 * earlier runs' updates (measured 2026-11-23: the one-UPDATE-per-job side between 12 and 19 s, and
 * 11.8, 13.5, 15.4 s on one copy). The last run of each side also times the workers alone, on the
 * copy's other half of the rewards.
 */
export function singleCancelPhases({ context, data, measured, startApi, startWorker }: PhaseKit): Phase[] {
  const { settings, progress, checks } = context;
  const { requests, runs, connections } = settings.singles;
  const { pollIntervalMs, runTimeoutMs: timeoutMs } = settings;
  const sides = [
    { side: 'coalesced', merchant: () => seeded(data.singles, 'single cancels'), env: {} },
    {
      side: 'one UPDATE per job',
      merchant: () => seeded(data.singlesBaseline, 'single cancels baseline'),
      env: { COALESCE_MAX_BATCH: '1' },
    },
  ] as const;
  return Array.from({ length: runs }, (_, run) => run + 1).flatMap((index) =>
    sides.map(({ side, merchant: sideMerchant, env }) => {
      const label = `${side}, ${index} of ${runs}`;
      return phase('singles', `single cancels, ${label}`, async (db) => {
        const merchant = sideMerchant();
        const name = `singles-${side.replaceAll(' ', '-')}-${index}`;
        const api = await startApi(`api-${name}`);
        await startWorker(`worker-${name}`, env);
        const ids = await activeRewardIds(db, merchant.id);
        if (ids.length !== 2 * requests)
          throw new Error(`${label}: ${ids.length} rewards seeded, ${2 * requests} needed`);
        const options = { connections, pollIntervalMs, timeoutMs, label: `single cancels, ${label}` };
        const warmUp = Math.round(requests / 4);
        progress.step(`single cancels (${label}): warm-up, ${warmUp} cancels of rewards that do not exist`);
        await warmUpSingleCancels(db, api.baseUrl, merchant, warmUp, options, checks);
        progress.step(`single cancels (${label}): ${requests} requests at -c ${connections}, end to end`);
        // The first coalesced run also sizes what the service wrote for itself per cancel.
        const sizing = side === 'coalesced' && index === 1;
        const sizeBefore = sizing ? await bookkeepingSize(db) : null;
        const endToEnd = await measureSingleCancels(db, api.baseUrl, merchant, ids.slice(0, requests), options, checks);
        (side === 'coalesced' ? measured.coalesced : measured.oneUpdatePerJob).push(endToEnd);
        if (sizeBefore) {
          const per = bytesPer(sizeBefore, await bookkeepingSize(db), requests);
          measured.bookkeeping.single = {
            cancels: requests,
            bytesPerCancel: per.bytes,
            webhookBytesPerCancel: per.webhookBytes,
          };
          progress.step(`single cancels (${label}): ${per.bytes} bytes of bookkeeping per cancel`);
        }
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
    }),
  );
}

/** The merchant's rewards, all ACTIVE, in a fixed order (by id: scattered over the table, as singles are). */
async function activeRewardIds(db: pg.Pool, merchantId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string; status: string }>(
    'SELECT id, status FROM rewards WHERE merchant_id = $1 ORDER BY id',
    [merchantId],
  );
  if (rows.some((row) => row.status !== 'ACTIVE')) throw new Error(`merchant ${merchantId} has rewards not ACTIVE`);
  return rows.map((row) => row.id);
}

/**
 * The API and worker of each run are new processes, whose first thousands of requests run cold code
 * (V8 has not optimised the route, the validation, the batcher or the worker's coalescer yet), which a
 * production process met long ago. So before the timed run, `count` single cancels of reward ids that
 * do not exist go through the same route and worker at the same speed, and the run waits until each
 * one's job has completed (its audit row: not found, nothing cancelled). No reward changes.
 */
async function warmUpSingleCancels(
  db: pg.Pool,
  baseUrl: string,
  merchant: SeededMerchant,
  count: number,
  options: Pick<SingleCancelOptions, 'connections' | 'pollIntervalMs' | 'timeoutMs' | 'label'>,
  checks: Checks,
): Promise<void> {
  const countWarmUpJobs = async () => {
    const { rows } = await db.query<{ finished: number; notFound: number; cancelled: number }>(
      `SELECT count(*)::int AS finished,
              count(*) FILTER (WHERE state = 'completed' AND outcome = 'notFound')::int AS "notFound",
              count(*) FILTER (WHERE outcome = 'cancelled')::int AS cancelled
       FROM cancellation_jobs WHERE merchant_id = $1 AND operation = 'cancel' AND finished_at IS NOT NULL`,
      [merchant.id],
    );
    return rows[0] ?? { finished: 0, notFound: 0, cancelled: 0 };
  };
  const before = await countWarmUpJobs();
  const head = JSON.stringify(signedBody(merchant)).slice(0, -1);
  const bodies = Array.from({ length: count }, () => `${head},"id":"${randomUUID()}"}`);
  const http = await sendRequests(baseUrl, CANCEL_PATH, bodies, options);
  const after = await pollUntil(
    async () => {
      const now = await countWarmUpJobs();
      return now.finished - before.finished >= count ? now : undefined;
    },
    {
      intervalMs: options.pollIntervalMs,
      timeoutMs: options.timeoutMs,
      what: `${options.label}: warm-up jobs finished`,
    },
  );
  checks.expect(
    `${options.label}: warm-up answered, every job completed as not found, nothing cancelled`,
    http.errors === 0 &&
      after.finished - before.finished === count &&
      after.notFound - before.notFound === count &&
      after.cancelled === before.cancelled,
    `${http.errors} request errors; ${after.finished - before.finished} finished, ` +
      `${after.notFound - before.notFound} not found, ${after.cancelled - before.cancelled} cancelled`,
  );
}

/**
 * One signed single cancel per reward of `ids`, sent at full speed (request-sender.ts: kept-alive
 * connections, `connections` in flight) through the API to the worker that is running, timed until the database
 * shows every one of them CANCELLED (polled every `pollIntervalMs`).
 */
async function measureSingleCancels(
  db: pg.Pool,
  baseUrl: string,
  merchant: SeededMerchant,
  ids: readonly string[],
  options: SingleCancelOptions,
  checks: Checks,
): Promise<SingleCancelRun> {
  const { label } = options;
  const countCancelled = async () => {
    // One indexed count by merchant: the merchant's other rewards are either all cancelled already
    // (an earlier run) or untouched, so the count moves only with this run's rewards.
    const { rows } = await db.query<{ cancelled: number }>(
      `SELECT count(*)::int AS cancelled FROM rewards WHERE merchant_id = $1 AND status = 'CANCELLED'`,
      [merchant.id],
    );
    return rows[0]?.cancelled ?? 0;
  };
  // The count reads every reward of the merchant, 20 times a second: a share of a Postgres core taken
  // from the run it measures (~12 % of a core at 40,000 rewards, measured 2026-11-23). So until the last requests sent are all cancelled, which the
  // queue's order puts near the end, only they are looked up (by primary key); then the whole count.
  const lastSent = ids.slice(-LAST_SENT_PROBE);
  const lastSentCancelled = async () => {
    const { rows } = await db.query<{ cancelled: number }>(
      `SELECT count(*)::int AS cancelled FROM rewards
       WHERE merchant_id = $1 AND id = ANY($2::uuid[]) AND status = 'CANCELLED'`,
      [merchant.id, lastSent],
    );
    return (rows[0]?.cancelled ?? 0) === lastSent.length;
  };
  let nearlyDone = false;
  const before = await countCancelled();
  const head = JSON.stringify(signedBody(merchant)).slice(0, -1);
  const bodies = ids.map((id) => `${head},"id":"${id}"}`);

  if (options.pauseQueue) await options.pauseQueue(true);
  const started = performance.now();
  let acceptMs = 0;
  let loadDone: LoadFigures | null = null;
  let loadError: Error | null = null;
  const load = sendRequests(baseUrl, CANCEL_PATH, bodies, {
    connections: options.connections,
    timeoutMs: options.timeoutMs,
  }).then(
    (figures) => {
      acceptMs = performance.now() - started;
      loadDone = figures;
      return figures;
    },
    (error: Error) => {
      loadError = error;
      throw error;
    },
  );
  load.catch(() => {}); // handled below: awaited after the polling
  let clockStart = started;
  if (options.pauseQueue) {
    await load;
    clockStart = performance.now();
    await options.pauseQueue(false);
  }
  await pollUntil(
    async () => {
      if (loadError) throw loadError;
      // A request that failed leaves a reward that nobody will cancel: no point waiting for it.
      const figures = loadDone as LoadFigures | null;
      if (figures && figures.errors > 0) throw new Error(`${label}: ${figures.errors} requests failed`);
      nearlyDone ||= await lastSentCancelled();
      if (!nearlyDone) return undefined;
      return (await countCancelled()) === before + ids.length ? true : undefined;
    },
    { intervalMs: options.pollIntervalMs, timeoutMs: options.timeoutMs, what: `${label}: all rewards cancelled` },
  );
  const ms = performance.now() - clockStart;
  const http = await load;

  // What was measured is what was asked: one request per reward, each answered, each reward
  // cancelled by a job of its own, and every job's audit row completed with outcome `cancelled`.
  const { rows } = await db.query<{ cancelled: number; jobs: number; audited: number; first: number; last: number }>(
    `SELECT count(*) FILTER (WHERE r.status = 'CANCELLED')::int AS cancelled,
            count(DISTINCT r.cancellation_job_id)::int AS jobs,
            count(j.id) FILTER (WHERE j.state = 'completed' AND j.outcome = 'cancelled')::int AS audited,
            (extract(epoch FROM min(r.cancelled_at)) * 1000)::float8 AS first,
            (extract(epoch FROM max(r.cancelled_at)) * 1000)::float8 AS last
     FROM rewards r LEFT JOIN cancellation_jobs j ON j.merchant_id = r.merchant_id AND j.id = r.cancellation_job_id
     WHERE r.merchant_id = $1 AND r.id = ANY($2::uuid[])`,
    [merchant.id, ids],
  );
  const row = rows[0];
  let valid = checks.equal(`${label}: requests answered`, http.requests, ids.length);
  valid =
    checks.expect(
      `${label}: no request errors`,
      http.errors === 0,
      `${http.errors} errors, ${JSON.stringify(http.statusCodes)}`,
    ) && valid;
  valid = checks.equal(`${label}: rewards CANCELLED`, row?.cancelled, ids.length) && valid;
  valid = checks.equal(`${label}: distinct cancelling jobs`, row?.jobs, ids.length) && valid;
  valid = checks.equal(`${label}: job audit rows completed with outcome cancelled`, row?.audited, ids.length) && valid;
  return {
    requests: ids.length,
    ms: round(ms, 0),
    acceptMs: round(acceptMs, 0),
    sqlSpanMs: row && row.first !== null && row.last !== null ? round(row.last - row.first, 0) : null,
    http,
    valid,
  };
}
