import type { Queue } from 'bullmq';
import { type BatchMember, batchIdOf, memberJobId, newBatchId } from '../../shared/cancellations/member-ids.js';
import type { RedisConnection } from '../../shared/redis/redis.js';
import {
  abortKey,
  abortKeyPrefix,
  cancelDedupKey,
  jobKey,
  jobKeyPrefix,
  keyLifetimes,
  queueNames,
  WITHDRAWN,
} from '../../shared/redis/redis-keys.js';
import type { ShardLayout } from '../../shared/redis/shards.js';
import { recordJobOwner } from '../jobs/job-owner.js';

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
 * and abort; only the queue entry is shared; the batch is found from a member's id alone (member-ids.ts).
 *
 * Identical waiting requests (same merchant and reward) share one member id: one small dedup key per
 * member (redis-keys.ts), read only while that member's batch has not started, deleted when a worker
 * takes the batch (worker/single-cancels/take-batch.ts: so Redis holds them for waiting requests only),
 * and kept at most keyLifetimes.cancelDedupMs.
 */

/** At most this many requests per queue job (the job's data stays under ~100 KB). */
export const MAX_BATCH_MEMBERS = 500;

/**
 * For each member of a batch being stored (KEYS[i] its dedup key, KEYS[n + i] its abort mark, ARGV[5 + i]
 * its id): the id of an identical member that is still waiting, or false, in which case this member
 * becomes the one later requests share. A waiting member is one whose batch job exists and has not
 * started, and that nobody aborted. It runs just before the batch is added, in the same round trip
 * (pipelined): a member that found a waiting twin is stored all the same, so it is marked withdrawn
 * here and its worker skips it without a word; its request is answered with the twin's id.
 *
 * The twin's batch hash and abort mark are the only keys not declared: they are named by the id this
 * script reads from the dedup key, so they cannot be known before the call, and declaring them would
 * take a second round trip per batch. They are built from key prefixes redis-keys.ts supplies (ARGV[1]
 * and ARGV[2]), and the batch id from the member id as member-ids.ts does (32 characters, then 0000),
 * as BullMQ's own scripts build job keys; the registry keeps them in the slot of the declared keys.
 * ARGV[1]: the single queue's job key prefix, ARGV[2]: the abort marks' prefix, ARGV[3]: the dedup keys'
 * lifetime (ms), ARGV[4]: the withdrawn marks' lifetime (ms), ARGV[5]: the withdrawn mark's value.
 */
const SHARE_WAITING = `
local n = #KEYS / 2
local shared = {}
for index = 1, n do
  local key = KEYS[index]
  local mine = ARGV[5 + index]
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
    redis.call('SET', KEYS[n + index], ARGV[5], 'PX', ARGV[4])
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

/** One single cancel as the route accepted it: a batch member without its id yet, and its merchant. */
export type SingleCancelPayload = Omit<BatchMember, 'jobId'> & { merchantId: string };

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
    private readonly layout: ShardLayout,
    /** The single-cancel queue of the merchant's shard. */
    private readonly queue: (merchantId: string) => Queue,
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
    // The batch, its members' abort marks and their dedup keys: all under the merchant's shard prefix.
    const prefix = this.layout.merchantPrefix(merchantId);
    const batchId = newBatchId(this.layout.merchantShard(merchantId));
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
    const keys = distinct.map((same) => cancelDedupKey(prefix, (same[0] as Waiting).deduplicationId));
    const marks = members.map((member) => abortKey(prefix, member.jobId));
    // One round trip: the twin lookup and the batch are sent together, the batch with every member
    // (a request waits on Redis once, which bounds how many the API answers per second).
    const sharing = this.redis.eval(
      SHARE_WAITING,
      keys.length + marks.length,
      ...keys,
      ...marks,
      jobKeyPrefix(prefix, queueNames.single),
      abortKeyPrefix(prefix),
      keyLifetimes.cancelDedupMs,
      keyLifetimes.withdrawnMarkMs,
      WITHDRAWN,
      ...members.map((member) => member.jobId),
    ) as Promise<Array<string | null>>;
    // (Through a promise, so that queues not built yet reject like any failed store.)
    const adding = Promise.resolve()
      .then(() => this.queue(merchantId).add('cancelBatch', { merchantId, requests: members }, { jobId: batchId }))
      .then(() => recordJobOwner(this.redis, jobKey(prefix, queueNames.single, batchId), merchantId));
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
 * An abort of a single cancel that has not started (KEYS[1] its batch's hash, KEYS[2] its abort mark,
 * just set; ARGV[1] the withdrawn mark's value, ARGV[2] its lifetime in ms). A member of a batch that has
 * not started: the mark becomes withdrawn in the same step as the check, so the worker that takes the
 * batch later skips the member without a word (the API has recorded and announced it): 1. The withdrawn
 * mark lives only the deduplication window (a batch taken later finds the member's audit row instead,
 * cancel-batch.processor.ts). Once the batch has started: 0, and the worker that runs it sees the plain
 * mark instead, which keeps its own lifetime.
 */
const WITHDRAW_MEMBER = `
if redis.call('EXISTS', KEYS[1]) == 1 and not redis.call('HGET', KEYS[1], 'processedOn') then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`;

/** True: withdrawn from its batch; false: its batch has started. */
export async function withdrawMember(redis: RedisConnection, layout: ShardLayout, jobId: string): Promise<boolean> {
  const prefix = layout.jobPrefix(jobId);
  const batch = jobKey(prefix, queueNames.single, batchIdOf(jobId));
  return (
    (await redis.eval(WITHDRAW_MEMBER, 2, batch, abortKey(prefix, jobId), WITHDRAWN, keyLifetimes.withdrawnMarkMs)) ===
    1
  );
}
