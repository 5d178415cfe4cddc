import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { BulkCancelRun, RawUpdateRun } from '../figures/bulk-cancel.js';
import { BULK_CANCEL_BY_QUERY_PATH } from '../lib/api-paths.js';
import type { Checks } from '../lib/checks.js';
import { loadAverage1m } from '../lib/machine.js';
import type { MerchantClient } from '../lib/merchant-client.js';
import { round } from '../lib/percentiles.js';
import { sleep } from '../lib/progress.js';

/**
 * One bulkCancelByQuery through the service, and its baseline, one raw UPDATE of the same rows: the two
 * runs every bulk phase times (bulk-cancel.phase.ts, read-all-stream.phase.ts, worker-memory.phase.ts).
 */

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
