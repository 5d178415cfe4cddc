import type pg from 'pg';
import type { Checks } from '../lib/checks.js';
import { type LoadFigures, runLoad } from '../lib/http-load.js';
import { signedBody } from '../lib/merchant-client.js';
import { round } from '../lib/percentiles.js';
import { pollUntil } from '../lib/progress.js';
import type { SeededMerchant } from '../lib/seed.js';

export const CANCEL_PATH = '/api/v1/integration/rewards/cancel';

export interface SingleCancelRun {
  requests: number;
  /**
   * end-to-end: first request sent → the last of the rewards seen CANCELLED in the database.
   * drain: the jobs all stored first (queue paused) → queue resumed → the last reward CANCELLED.
   */
  ms: number;
  /** First request sent → last request answered (every job stored). */
  acceptMs: number;
  /** First to last committed batch, by the rewards' cancelled_at (each batch's transaction start). */
  sqlSpanMs: number | null;
  http: LoadFigures;
  valid: boolean;
}

export interface SingleCancelOptions {
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

/** The merchant's rewards, all ACTIVE, in a fixed order (by id: scattered over the table, as singles are). */
export async function activeRewardIds(db: pg.Pool, merchantId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string; status: string }>(
    'SELECT id, status FROM rewards WHERE merchant_id = $1 ORDER BY id',
    [merchantId],
  );
  if (rows.some((row) => row.status !== 'ACTIVE')) throw new Error(`merchant ${merchantId} has rewards not ACTIVE`);
  return rows.map((row) => row.id);
}

/**
 * One signed single cancel per reward of `ids`, sent at full speed (autocannon: keep-alive,
 * `connections` in flight) through the API to the worker that is running, timed until the database
 * shows every one of them CANCELLED (polled every `pollIntervalMs`).
 */
export async function measureSingleCancels(
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
  const before = await countCancelled();
  const head = JSON.stringify(signedBody(merchant)).slice(0, -1);
  let sent = 0;
  const nextBody = () => `${head},"id":"${ids[sent++ % ids.length]}"}`;

  if (options.pauseQueue) await options.pauseQueue(true);
  const started = performance.now();
  let acceptMs = 0;
  let loadDone: LoadFigures | null = null;
  let loadError: Error | null = null;
  const load = runLoad(
    baseUrl,
    { method: 'POST', path: CANCEL_PATH, nextBody },
    { connections: options.connections, amount: ids.length },
  ).then(
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
      return (await countCancelled()) === before + ids.length ? true : undefined;
    },
    { intervalMs: options.pollIntervalMs, timeoutMs: options.timeoutMs, what: `${label}: all rewards cancelled` },
  );
  const ms = performance.now() - clockStart;
  const http = await load;

  // What was measured is what was asked: one request per reward, each answered, each reward
  // cancelled by a job of its own, and every job's audit row completed with `cancelled: 1`.
  const { rows } = await db.query<{ cancelled: number; jobs: number; audited: number; first: number; last: number }>(
    `SELECT count(*) FILTER (WHERE r.status = 'CANCELLED')::int AS cancelled,
            count(DISTINCT r.cancellation_job_id)::int AS jobs,
            count(j.id) FILTER (WHERE j.state = 'completed' AND j.cancelled = 1)::int AS audited,
            (extract(epoch FROM min(r.cancelled_at)) * 1000)::float8 AS first,
            (extract(epoch FROM max(r.cancelled_at)) * 1000)::float8 AS last
     FROM rewards r LEFT JOIN cancellation_jobs j ON j.id = r.cancellation_job_id::text
     WHERE r.id = ANY($1::uuid[])`,
    [ids],
  );
  const row = rows[0];
  let valid = checks.equal(`${label}: requests sent`, sent, ids.length);
  valid =
    checks.expect(
      `${label}: no request errors`,
      http.errors === 0,
      `${http.errors} errors, ${JSON.stringify(http.statusCodes)}`,
    ) && valid;
  valid = checks.equal(`${label}: rewards CANCELLED`, row?.cancelled, ids.length) && valid;
  valid = checks.equal(`${label}: distinct cancelling jobs`, row?.jobs, ids.length) && valid;
  valid = checks.equal(`${label}: job audit rows completed with cancelled = 1`, row?.audited, ids.length) && valid;
  return {
    requests: ids.length,
    ms: round(ms, 0),
    acceptMs: round(acceptMs, 0),
    sqlSpanMs: row && row.first !== null && row.last !== null ? round(row.last - row.first, 0) : null,
    http,
    valid,
  };
}
