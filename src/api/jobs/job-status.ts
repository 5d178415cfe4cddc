import { batchIdOf } from '../../shared/cancellations/member-ids.js';
import { outcomeCounts } from '../../shared/cancellations/outcome-counts.js';
import type { Db } from '../../shared/db/client.js';
import type { CancellationJobRow } from '../../shared/db/schema.js';
import { operations } from '../../shared/db/schema.js';
import { AppError, RETRY_SOON_SECONDS } from '../../shared/errors/errors.js';
import { findJobRecord } from '../../shared/jobs/cancellation-jobs.repository.js';
import type { JobStateName, JobStatus } from '../../shared/jobs/job-status-schema.js';
import { isFinished } from '../../shared/jobs/public-status.js';
import type { RedisConnection } from '../../shared/redis/redis.js';
import {
  abortKey,
  jobChildrenKeys,
  jobKey,
  keyLifetimes,
  queueNames,
  RAN_TO_END,
  WITHDRAWN,
} from '../../shared/redis/redis-keys.js';
import type { ShardLayout } from '../../shared/redis/shards.js';
import type { ReadRouter } from '../reads/read-router.js';
import { JOB_OWNER_FIELD } from './job-owner.js';

/**
 * Reads a job's audit row (`cancellation_jobs`) by merchant and id; `merchantId` undefined (the admin
 * API) scans by id alone.
 */
export type JobRecordReader = (
  merchantId: string | undefined,
  jobId: string,
) => Promise<CancellationJobRow | undefined>;

/** From the primary: for whoever acts on the answer (abort, the admin API). */
export function primaryJobRecords(db: Db): JobRecordReader {
  return (merchantId, jobId) => findJobRecord(db, merchantId, jobId);
}

/**
 * Through the read router: a finished job's row never changes again, so the replica's copy is as good
 * as the primary's. A row the replica does not have yet, or has not seen finish, may only be lagging:
 * the primary is asked too (its answer wins, unless it is down).
 */
export function finishedJobRecords(reads: ReadRouter): JobRecordReader {
  return (merchantId, jobId) =>
    reads.read('jobStatus', (db) => findJobRecord(db, merchantId, jobId), {
      accept: (row) => row !== undefined && isFinished(row.state),
    });
}

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Reads one job in one round trip: a bulk job's own hash (KEYS[2]) with its parts' bookkeeping
 * (KEYS[3], KEYS[4]), or a single cancel's batch (KEYS[5]), and its abort mark (KEYS[1]; ARGV[2] the
 * withdrawn mark's value, ARGV[4] the value of a job that ran to its end unaborted). Nothing here grows with the number of jobs queued: no list is scanned
 * (BullMQ's getState walks the waiting lists). The merchant is the hash's owner field (ARGV[3],
 * job-owner.ts), so a large payload is neither searched nor sent back over the wire.
 *
 * A single cancel has no hash of its own (member-ids.ts): while its batch (named by the id) has not
 * finished and lists it (ARGV[1]), the batch's times are its own. A finished batch's members, and a
 * job aborted before it started, are answered from Postgres (false here).
 */
const READ_JOB = `
local mark = redis.call('GET', KEYS[1])
if mark == ARGV[2] then return false end
local aborted = (mark and mark ~= ARGV[4]) and 1 or 0
local f = redis.call('HMGET', KEYS[2], 'name', 'timestamp', 'processedOn', 'finishedOn', 'progress', 'returnvalue', 'failedReason', ARGV[3])
if f[1] then
  local merchant = f[8]
  local processed, pending = 0, 0
  if not f[4] then
    processed = redis.call('HLEN', KEYS[3])
    pending = redis.call('SCARD', KEYS[4])
  end
  return {f[1], f[2] or false, f[3] or false, f[4] or false, f[5] or false, f[6] or false, f[7] or false,
    merchant or false, processed, pending, aborted}
end
f = redis.call('HMGET', KEYS[5], 'timestamp', 'processedOn', 'finishedOn', 'data', ARGV[3])
if f[4] and not f[3] and string.find(f[4], '"jobId":"' .. ARGV[1] .. '"', 1, true) then
  return {'cancel', f[1] or false, f[2] or false, false, false, false, false, f[5] or false, 0, 0, aborted}
end
return false
`;

type RawJob = [
  name: string,
  timestamp: string | null,
  processedOn: string | null,
  finishedOn: string | null,
  progress: string | null,
  returnvalue: string | null,
  failedReason: string | null,
  merchantId: string | null,
  processedChildren: number,
  pendingChildren: number,
  abortRequested: number,
];

/**
 * A job's status: from its hash in Redis while BullMQ holds it (live progress), else from the
 * `cancellation_jobs` table, which keeps it after Redis has forgotten the job. O(1) in Redis whatever
 * the backlog; a Postgres outage makes the second read fail (the API answers 503).
 *
 * `merchantId`: the merchant asking (its key in Postgres: another merchant's job is not found there);
 * undefined for the admin API, which looks a job up by its id alone (a scan of `cancellation_jobs`, whose
 * key starts with the merchant: an operator's occasional read, never a merchant's).
 *
 * A job that finished more than `retentionMs` ago is not found, wherever it is still held: the
 * retention sweeper removes its audit row (docs/design.md §13), and Redis keeps finished jobs for their
 * own time (an hour, failed ones 7 days), which may be longer than RETENTION_MS (down to a minute). So
 * the answer does not depend on which of the two happens to hold the job, or on when the sweeper ran.
 */
export async function findJobStatus(
  redis: RedisConnection,
  shards: ShardLayout,
  jobRecords: JobRecordReader,
  jobId: string,
  retentionMs: number,
  merchantId: string | undefined,
): Promise<JobStatus | null> {
  const status = await readJobStatus(redis, shards, jobRecords, jobId, merchantId);
  if (status?.finishedAt != null && status.finishedAt < Date.now() - retentionMs) return null;
  return status;
}

async function readJobStatus(
  redis: RedisConnection,
  shards: ShardLayout,
  jobRecords: JobRecordReader,
  jobId: string,
  merchantId: string | undefined,
): Promise<JobStatus | null> {
  if (!JOB_ID.test(jobId)) return null;
  // Every key of the job is under its shard's prefix, which the id names: one slot, one round trip.
  const queuePrefix = shards.jobPrefix(jobId);
  const bulkJob = jobKey(queuePrefix, queueNames.bulk, jobId);
  const children = jobChildrenKeys(bulkJob);
  const keys = [
    abortKey(queuePrefix, jobId),
    bulkJob,
    children.processed,
    children.dependencies,
    jobKey(queuePrefix, queueNames.single, batchIdOf(jobId)),
  ];
  let raw: RawJob | null;
  try {
    raw = (await redis.eval(
      READ_JOB,
      keys.length,
      ...keys,
      jobId,
      WITHDRAWN,
      JOB_OWNER_FIELD,
      RAN_TO_END,
    )) as RawJob | null;
  } catch (error) {
    // Redis away: the job may be there, so "not found" from Postgres would be wrong.
    throw new AppError('SERVICE_UNAVAILABLE', undefined, {
      retryAfterSeconds: RETRY_SOON_SECONDS,
      logDetail: 'redis',
      cause: error,
    });
  }
  if (raw) {
    const fromQueue = statusFromHash(jobId, raw);
    if (fromQueue && !mayBeWithdrawnUnmarked(fromQueue)) return fromQueue;
    if (fromQueue) {
      const row = await jobRecords(merchantId ?? fromQueue.merchantId, jobId);
      return row && isFinished(row.state) ? statusFromRow(row) : fromQueue;
    }
  }
  const row = await jobRecords(merchantId, jobId);
  return row ? statusFromRow(row) : null;
}

/**
 * A single cancel whose batch has waited longer than a withdrawn mark lives (redis-keys.ts): if the
 * merchant withdrew it, its mark may be gone, and only its audit row says so.
 */
function mayBeWithdrawnUnmarked(status: JobStatus): boolean {
  return (
    status.operation === 'cancel' &&
    status.state === 'queued' &&
    Date.now() - status.createdAt > keyLifetimes.withdrawnMarkMs
  );
}

function isOperation(name: string): name is JobStatus['operation'] {
  return (operations as readonly string[]).includes(name);
}

function numberOrNull(text: string | null): number | null {
  return text === null || text === '' ? null : Number(text);
}

function statusFromHash(jobId: string, raw: RawJob): JobStatus | null {
  const [
    name,
    timestamp,
    processedOn,
    finishedOn,
    progress,
    returnvalue,
    failedReason,
    merchantId,
    done,
    pending,
    abort,
  ] = raw;
  // Parts of a split job are not the merchant's to see; their parent is.
  if (!merchantId || !isOperation(name)) return null;
  const result = parseResult(returnvalue);
  let state: JobStateName;
  if (finishedOn && !result) state = 'failed';
  else if (finishedOn) state = abort ? 'cancelled' : 'completed';
  else if (abort) state = 'cancelling';
  else state = processedOn ? 'running' : 'queued';
  let percent = 0;
  if (state === 'completed') percent = 100;
  else if (done + pending > 0) percent = Math.floor((done / (done + pending)) * 100);
  else if (progress !== null && Number.isFinite(Number(progress))) percent = Number(progress);
  return {
    jobId,
    merchantId,
    operation: name,
    state,
    createdAt: Number(timestamp),
    startedAt: numberOrNull(processedOn),
    finishedAt: isFinished(state) ? numberOrNull(finishedOn) : null,
    progress: percent,
    result: state === 'completed' || state === 'cancelled' ? result : null,
    error: failedReason || null,
  };
}

function parseResult(returnvalue: string | null): Record<string, number> | null {
  if (!returnvalue) return null;
  try {
    const parsed = JSON.parse(returnvalue) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, number>) : null;
  } catch {
    return null;
  }
}

/** A job as its audit row tells it (also the jobs/list route's view of every job it lists). */
export function statusFromRow(row: CancellationJobRow): JobStatus {
  let counts: Record<string, number | null>;
  if (row.outcome !== null) counts = { ...outcomeCounts(row.outcome) };
  else if (row.operation === 'bulkCancelByQuery') counts = { players: row.players, cancelled: row.cancelled };
  else {
    counts = {
      requested: row.requested,
      cancelled: row.cancelled,
      alreadyCancelled: row.already_cancelled,
      notCancellable: row.not_cancellable,
      notFound: row.not_found,
    };
  }
  const hasCounts = Object.values(counts).some((value) => value !== null);
  return {
    jobId: row.id,
    merchantId: row.merchant_id,
    operation: row.operation,
    state: row.state,
    createdAt: row.created_at.getTime(),
    startedAt: row.started_at?.getTime() ?? null,
    finishedAt: row.finished_at?.getTime() ?? null,
    progress: row.state === 'completed' || row.state === 'cancelled' ? 100 : 0,
    result: hasCounts
      ? (Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v ?? 0])) as Record<string, number>)
      : null,
    error: row.error,
  };
}
