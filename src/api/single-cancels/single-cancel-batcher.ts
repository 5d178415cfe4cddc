import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import { abortKey } from '../../shared/queue/job-abort.js';
import { deduplicationKey, type JobPayload } from '../../shared/queue/job-catalogue.js';
import type { RedisConnection } from '../../shared/queue/redis.js';

/**
 * Single cancels travel in batches: the API stores the single cancels it accepts in one turn of its
 * event loop as one queue job per merchant (a `cancelBatch`), instead of one queue job each.
 *
 * Why: storing a queue job, taking it and finishing it costs Redis and the processes about 0.3 ms of
 * CPU per job (three scripts, four stream events, a lock); for a single cancel that was more than
 * everything else it costs together. One queue job for the cancels that arrived together costs that
 * once (measured in bench/README.md). Nothing waits for a batch to fill: it is stored as soon as the
 * API has read what arrived, so under light load a batch holds one request and adds no delay.
 *
 * Every request still gets a job of its own, with its own id, status, audit row, log line, webhook
 * and abort; only the queue entry is shared. A member's id is its batch's id with the last four hex
 * digits set to its place (1 to ffff; the batch's own id ends in 0000), so the batch is found from
 * the member id alone: job status and abort cost O(1) in Redis, with nothing stored per member.
 *
 * Identical waiting requests (same merchant and reward) share one member id: one small key per member
 * (`<prefix>:cancel-dedup:<hash>`), read only while that member's batch has not started, deleted when a
 * worker takes the batch (so Redis holds them for waiting requests only), and kept at most 5 minutes.
 */

/** At most this many requests per queue job (the job's data stays under ~100 KB). */
export const MAX_BATCH_MEMBERS = 500;

/** How long an identical request may still find a waiting member to share (past it: a job of its own). */
const DEDUP_TTL_MS = 5 * 60 * 1000;

/** As long as any abort mark is kept (job-abort.ts). */
const ABORT_MARK_TTL_SECONDS = 7 * 24 * 60 * 60;

const MEMBER_DIGITS = 4;

function newBatchId(): string {
  return `${randomUUID().slice(0, -MEMBER_DIGITS)}0000`;
}

/** The id of the batch's `index`-th request (from 0). */
export function memberJobId(batchId: string, index: number): string {
  return `${batchId.slice(0, -MEMBER_DIGITS)}${(index + 1).toString(16).padStart(MEMBER_DIGITS, '0')}`;
}

/** The batch a member id belongs to (itself for a batch id, or for any id that is not a member's). */
export function batchIdOf(jobId: string): string {
  return `${jobId.slice(0, -MEMBER_DIGITS)}0000`;
}

export function dedupKey(prefix: string, deduplicationId: string): string {
  return `${prefix}:cancel-dedup:${deduplicationId}`;
}

/**
 * For each member of a batch being stored (KEYS[i] its dedup key, ARGV[4 + i] its id): the id of an
 * identical member that is still waiting, or false, in which case this member becomes the one later
 * requests share. A waiting member is one whose batch job exists and has not started, and that nobody
 * aborted. The batch key is built from the member id (same prefix, so the same Cluster slot), as
 * BullMQ's own scripts do. It runs just before the batch is added, in the same round trip (pipelined):
 * a member that found a waiting twin is stored all the same, so it is marked withdrawn here and its
 * worker skips it without a word; its request is answered with the twin's id.
 * ARGV[1]: `<prefix>:cancel:` (the single queue's key prefix), ARGV[2]: `<prefix>:abort:`,
 * ARGV[3]: the dedup keys' ttl (ms), ARGV[4]: the abort marks' ttl (s).
 */
const SHARE_WAITING = `
local shared = {}
for index, key in ipairs(KEYS) do
  local mine = ARGV[4 + index]
  local existing = redis.call('GET', key)
  local share = false
  if existing then
    local batch = ARGV[1] .. string.sub(existing, 1, 32) .. '0000'
    if redis.call('EXISTS', batch) == 1 and not redis.call('HGET', batch, 'processedOn')
      and redis.call('EXISTS', ARGV[2] .. existing) == 0 then
      share = existing
    end
  end
  if share then
    redis.call('SET', ARGV[2] .. mine, 'withdrawn', 'EX', ARGV[4])
  else
    redis.call('SET', key, mine, 'PX', ARGV[3])
  end
  shared[index] = share
end
return shared
`;

/** Frees the dedup keys of members whose batch could not be stored (only those still theirs). */
const RELEASE = `
for index, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[index] then redis.call('DEL', key) end
end
return 0
`;

export type SingleCancelPayload = JobPayload<'cancel'>;
export type BatchMember = JobPayload<'cancelBatch'>['requests'][number];

export interface StoredSingleCancel {
  jobId: string;
  /** True when an identical waiting request already had a job, and this one shares it. */
  shared: boolean;
}

interface Waiting {
  member: Omit<BatchMember, 'jobId'>;
  deduplicationId: string;
  resolve: (stored: StoredSingleCancel) => void;
  reject: (error: unknown) => void;
}

/**
 * The API side: `add` resolves with the request's job id once the batch holding it is stored in Redis
 * (or with the id of an identical waiting request), and rejects if it could not be stored. The
 * caller's deadline still holds: a request answered 503 whose batch is stored later is applied, as a
 * job stored after its deadline always was.
 */
export class SingleCancelBatcher {
  private pending = new Map<string, Waiting[]>();
  private flushScheduled = false;
  /** Merchants with a batch on its way to Redis: what arrives meanwhile waits for it, then goes together. */
  private readonly storing = new Set<string>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly queue: () => Queue,
  ) {}

  add(payload: SingleCancelPayload, deduplicationId: string): Promise<StoredSingleCancel> {
    return new Promise<StoredSingleCancel>((resolve, reject) => {
      const { merchantId, ...member } = payload;
      let group = this.pending.get(merchantId);
      if (!group) {
        group = [];
        this.pending.set(merchantId, group);
      }
      group.push({ member, deduplicationId, resolve, reject });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // After the requests the event loop has read in this turn: they go in one job per merchant.
    setImmediate(() => this.flush());
  }

  /**
   * Stores each merchant's waiting requests, unless a batch of that merchant is still on its way: then
   * they wait for it (one round trip at most) and leave with everything else that came meanwhile. So a
   * batch grows with the load, and a request that comes alone leaves at once.
   */
  private flush(): void {
    this.flushScheduled = false;
    for (const [merchantId, waiting] of this.pending) {
      if (this.storing.has(merchantId)) continue;
      this.pending.delete(merchantId);
      this.storing.add(merchantId);
      const stores: Promise<void>[] = [];
      for (let start = 0; start < waiting.length; start += MAX_BATCH_MEMBERS) {
        stores.push(this.store(merchantId, waiting.slice(start, start + MAX_BATCH_MEMBERS)));
      }
      void Promise.all(stores).finally(() => {
        this.storing.delete(merchantId);
        if (this.pending.has(merchantId)) this.scheduleFlush();
      });
    }
  }

  private async store(merchantId: string, waiting: Waiting[]): Promise<void> {
    const batchId = newBatchId();
    // Identical requests in the same batch are one member.
    const byKey = new Map<string, Waiting[]>();
    for (const entry of waiting) {
      const same = byKey.get(entry.deduplicationId);
      if (same) same.push(entry);
      else byKey.set(entry.deduplicationId, [entry]);
    }
    const distinct = [...byKey.values()];
    const members: BatchMember[] = distinct.map((same, index) => ({
      ...(same[0] as Waiting).member,
      jobId: memberJobId(batchId, index),
    }));
    const keys = distinct.map((same) => dedupKey(this.prefix, (same[0] as Waiting).deduplicationId));
    // One round trip: the twin lookup and the batch are sent together, the batch with every member
    // (a request waits on Redis once, which bounds how many the API answers per second).
    const sharing = this.redis.eval(
      SHARE_WAITING,
      keys.length,
      ...keys,
      `${this.prefix}:cancel:`,
      `${this.prefix}:abort:`,
      DEDUP_TTL_MS,
      ABORT_MARK_TTL_SECONDS,
      ...members.map((member) => member.jobId),
    ) as Promise<Array<string | null>>;
    // (Through a promise, so that queues not built yet reject like any failed store.)
    const adding = Promise.resolve().then(() =>
      this.queue().add('cancelBatch', { merchantId, requests: members }, { jobId: batchId }),
    );
    const [looked, added] = await Promise.allSettled([sharing, adding]);
    if (looked.status === 'rejected' || added.status === 'rejected') {
      const error = looked.status === 'rejected' ? looked.reason : (added as PromiseRejectedResult).reason;
      for (const entry of waiting) entry.reject(error);
      // The batch is not stored: later identical requests must not be pointed at its members.
      if (looked.status === 'fulfilled') {
        await this.redis.eval(RELEASE, keys.length, ...keys, ...members.map((member) => member.jobId)).catch(() => {});
      }
      return;
    }
    distinct.forEach((entries, index) => {
      const twin = looked.value[index];
      // Within one batch too, only the first of identical requests made the job; the others share it.
      entries.forEach((entry, position) => {
        entry.resolve({ jobId: twin || (members[index] as BatchMember).jobId, shared: Boolean(twin) || position > 0 });
      });
    });
  }
}

/**
 * An abort of a single cancel that has not started (KEYS[1] its own job hash, KEYS[2] its batch's,
 * KEYS[3] its abort mark, just set). A job of its own (stored by an earlier version) is left to
 * BullMQ's removal: -1. A member of a batch that has not started: the mark becomes `withdrawn` in the
 * same step as the check, so the worker that takes the batch later skips the member without a word
 * (the API has recorded and announced it): 1. Once the batch has started: 0, and the worker that runs
 * it sees the plain mark instead.
 */
const WITHDRAW_MEMBER = `
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
if redis.call('EXISTS', KEYS[2]) == 1 and not redis.call('HGET', KEYS[2], 'processedOn') then
  redis.call('SET', KEYS[3], 'withdrawn', 'KEEPTTL')
  return 1
end
return 0
`;

/** The abort mark's value once the API has taken a waiting member out of its batch. */
export const WITHDRAWN = 'withdrawn';

/** 1: withdrawn from its batch; 0: its batch has started; -1: a job of its own (not in a batch). */
export async function withdrawMember(
  redis: RedisConnection,
  prefix: string,
  jobId: string,
  abortMark: string,
): Promise<-1 | 0 | 1> {
  const own = `${prefix}:cancel:${jobId}`;
  const batch = `${prefix}:cancel:${batchIdOf(jobId)}`;
  return (await redis.eval(WITHDRAW_MEMBER, 3, own, batch, abortMark)) as -1 | 0 | 1;
}

/**
 * A worker taking a batch: each member's abort mark (KEYS[i]), and its dedup key (KEYS[n + i]) deleted
 * if it still names this member (ARGV[i]): from now on an identical request gets a job of its own, so
 * the key is not needed, and Redis keeps dedup keys for waiting requests only.
 */
const TAKE_BATCH = `
local n = #ARGV
local marks = {}
for index = 1, n do
  marks[index] = redis.call('GET', KEYS[index])
  local dedup = KEYS[n + index]
  if redis.call('GET', dedup) == ARGV[index] then redis.call('DEL', dedup) end
end
return marks
`;

/** The members' abort marks (null: not aborted), in order; their dedup keys are released. */
export async function takeBatch(
  redis: RedisConnection,
  prefix: string,
  merchantId: string,
  members: readonly BatchMember[],
): Promise<Array<string | null>> {
  if (members.length === 0) return [];
  const keys = [
    ...members.map((member) => abortKey(prefix, member.jobId)),
    ...members.map((member) => dedupKey(prefix, singleCancelDeduplicationKey(merchantId, member))),
  ];
  return (await redis.eval(TAKE_BATCH, keys.length, ...keys, ...members.map((member) => member.jobId))) as Array<
    string | null
  >;
}

/** The key identical single cancels share (the cancel route builds it from the same fields). */
export function singleCancelDeduplicationKey(
  merchantId: string,
  target: { id?: string | null; externalId?: string | null },
): string {
  return deduplicationKey(
    merchantId,
    'cancel',
    target.id != null ? { id: target.id } : { externalId: target.externalId ?? '' },
  );
}
