import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { JobPayload } from './job-catalogue.js';
import type { RedisConnection } from './redis.js';

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
 * Identical waiting requests (DESIGN: same merchant and reward) share one member id: one small key per
 * member (`<prefix>:cancel-dedup:<hash>`), kept a few minutes, read only while that member's batch has
 * not started.
 */

/** At most this many requests per queue job (the job's data stays under ~100 KB). */
export const MAX_BATCH_MEMBERS = 500;

/** How long an identical request may still find a waiting member to share (past it: a job of its own). */
const DEDUP_TTL_MS = 5 * 60 * 1000;

const MEMBER_DIGITS = 4;

export function newBatchId(): string {
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
 * For each member (KEYS[i] its dedup key, ARGV[3 + i] its id): the id of an identical member that is
 * still waiting, or false, in which case this member becomes the one later requests share. A waiting
 * member is one whose batch job exists and has not started, and that nobody aborted. The batch key is
 * built from the member id (same prefix, so the same Cluster slot), as BullMQ's own scripts do.
 * ARGV[1]: `<prefix>:cancel:` (the single queue's key prefix), ARGV[2]: `<prefix>:abort:`, ARGV[3]: ttl.
 */
const SHARE_WAITING = `
local shared = {}
for index, key in ipairs(KEYS) do
  local mine = ARGV[3 + index]
  local existing = redis.call('GET', key)
  local share = false
  if existing then
    local batch = ARGV[1] .. string.sub(existing, 1, 32) .. '0000'
    if redis.call('EXISTS', batch) == 1 and not redis.call('HGET', batch, 'processedOn')
      and redis.call('EXISTS', ARGV[2] .. existing) == 0 then
      share = existing
    end
  end
  if not share then redis.call('SET', key, mine, 'PX', ARGV[3]) end
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
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // After the requests the event loop has read in this turn: they go in one job per merchant.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const groups = this.pending;
    this.pending = new Map();
    for (const [merchantId, waiting] of groups) {
      for (let start = 0; start < waiting.length; start += MAX_BATCH_MEMBERS) {
        void this.store(merchantId, waiting.slice(start, start + MAX_BATCH_MEMBERS));
      }
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
    const candidates = distinct.map((same, index) => ({
      ...(same[0] as Waiting).member,
      jobId: memberJobId(batchId, index),
    }));
    const keys = distinct.map((same) => dedupKey(this.prefix, (same[0] as Waiting).deduplicationId));
    // Within one batch too, only the first of identical requests made the job; the others share it.
    const settle = (entries: Waiting[], jobId: string, twinWaiting: boolean) => {
      entries.forEach((entry, index) => {
        entry.resolve({ jobId, shared: twinWaiting || index > 0 });
      });
    };
    const claimed: Array<{ key: string; jobId: string }> = [];
    try {
      const shared = (await this.redis.eval(
        SHARE_WAITING,
        keys.length,
        ...keys,
        `${this.prefix}:cancel:`,
        `${this.prefix}:abort:`,
        DEDUP_TTL_MS,
        ...candidates.map((member) => member.jobId),
      )) as Array<string | null>;
      const members: BatchMember[] = [];
      const mine: Array<{ entries: Waiting[]; jobId: string }> = [];
      distinct.forEach((entries, index) => {
        const twin = shared[index];
        if (twin) {
          settle(entries, twin, true);
          return;
        }
        const member = candidates[index] as BatchMember;
        members.push(member);
        mine.push({ entries, jobId: member.jobId });
        claimed.push({ key: keys[index] as string, jobId: member.jobId });
      });
      if (members.length === 0) return;
      await this.queue().add('cancelBatch', { merchantId, requests: members }, { jobId: batchId });
      for (const { entries, jobId } of mine) settle(entries, jobId, false);
    } catch (error) {
      // (Requests already answered with a waiting twin's id keep that answer.)
      for (const entry of waiting) entry.reject(error);
      if (claimed.length > 0) {
        const release = [...claimed.map(({ key }) => key), ...claimed.map(({ jobId }) => jobId)];
        await this.redis.eval(RELEASE, claimed.length, ...release).catch(() => {});
      }
    }
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
