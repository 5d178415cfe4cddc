import { randomUUID } from 'node:crypto';
import { queueShardPrefix } from './redis-keys.js';

/**
 * Queue shards (docs/design.md, "Queue shards"): with QUEUE_SHARDS = N > 1 the cancellation queues are
 * N pairs of queues, each pair and the per-merchant keys of its merchants under a hash tag of its own
 * (redis-keys.ts, queueShardPrefix), so a Redis Cluster spreads them over its masters.
 *
 * - A merchant's shard is FNV-1a (32 bits) of its id, lower-cased, modulo N: stable across processes,
 *   releases and languages, and cheap enough to compute on every request.
 * - A job's id names its shard, so status, abort and rewards find the job in O(1) whatever N is now: a
 *   sharded job id is a UUIDv8 (RFC 9562's layout for custom ids) whose first two hex digits are the
 *   shard; the rest is random as in a v4. A v4 id is a job of the unsharded layout (QUEUE_PREFIX). A
 *   part's id starts with its root's id and a batch member's with its batch's, so both carry the shard.
 * - With N = 1 nothing changes: the prefix is QUEUE_PREFIX and job ids are plain v4 UUIDs.
 * - QUEUE_SHARDS_PREVIOUS (set only while the count changes) makes workers consume the shards of both
 *   counts and makes an idempotency key found under the previous count still answer its job.
 */

/** Two hex digits of the job id. */
export const MAX_QUEUE_SHARDS = 256;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function fnv1a(text: string): number {
  let hash = FNV_OFFSET;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, FNV_PRIME) >>> 0;
  }
  return hash;
}

/** The shard of a merchant among `count` (null: unsharded, count 1). */
function merchantShard(merchantId: string, count: number): number | null {
  return count <= 1 ? null : fnv1a(merchantId.toLowerCase()) % count;
}

/** The shard a job id names (null: a v4 id, a job of the unsharded layout). */
export function jobShard(jobId: string): number | null {
  if (jobId.length < 15 || jobId[14] !== '8') return null;
  const shard = Number.parseInt(jobId.slice(0, 2), 16);
  return Number.isNaN(shard) ? null : shard;
}

/** A new job id for a job of shard `shard` (null: a plain v4 UUID). */
export function shardJobId(shard: number | null): string {
  const id = randomUUID();
  if (shard === null) return id;
  return `${shard.toString(16).padStart(2, '0')}${id.slice(2, 14)}8${id.slice(15)}`;
}

/**
 * `WORKER_SHARDS`: `0-3,8,10-11` (indexes of the current count). Answers the sorted indexes, or a message
 * saying what is wrong.
 */
export function parseShardList(text: string, count: number): number[] | string {
  const shards = new Set<number>();
  for (const entry of text.split(',').map((part) => part.trim())) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(entry);
    if (!match) return `"${entry}" is not a shard number or range (e.g. 0-3,8)`;
    const first = Number(match[1]);
    const last = match[2] === undefined ? first : Number(match[2]);
    if (last < first) return `"${entry}": the range ends before it starts`;
    if (last >= count) return `"${entry}": shards are numbered 0 to ${count - 1} (QUEUE_SHARDS=${count})`;
    for (let shard = first; shard <= last; shard++) shards.add(shard);
  }
  return [...shards].sort((a, b) => a - b);
}

/** The settings the layout reads (config.ts parses them; no import, as config.ts uses parseShardList). */
interface ShardSettings {
  QUEUE_PREFIX: string;
  QUEUE_SHARDS: number;
  QUEUE_SHARDS_PREVIOUS?: number | undefined;
  WORKER_SHARDS?: readonly number[] | undefined;
}

/**
 * Where each merchant's and each job's keys live: built once per process from the configuration and
 * passed down (the API's and the worker's deps), so every key of a merchant or a job is named by one rule.
 */
export class ShardLayout {
  readonly prefix: string;
  readonly count: number;
  readonly previousCount: number | undefined;
  private readonly pinned: readonly number[] | undefined;

  constructor(settings: ShardSettings) {
    this.prefix = settings.QUEUE_PREFIX;
    this.count = settings.QUEUE_SHARDS;
    this.previousCount =
      settings.QUEUE_SHARDS_PREVIOUS !== undefined && settings.QUEUE_SHARDS_PREVIOUS !== settings.QUEUE_SHARDS
        ? settings.QUEUE_SHARDS_PREVIOUS
        : undefined;
    this.pinned = settings.WORKER_SHARDS;
  }

  /** The prefix of a shard (null: the unsharded one, QUEUE_PREFIX). */
  shardPrefix(shard: number | null): string {
    return queueShardPrefix(this.prefix, shard);
  }

  /** The merchant's shard under the current count (null when unsharded). */
  merchantShard(merchantId: string): number | null {
    return merchantShard(merchantId, this.count);
  }

  /** The prefix of every per-merchant key of this merchant (redis-keys.ts). */
  merchantPrefix(merchantId: string): string {
    return this.shardPrefix(this.merchantShard(merchantId));
  }

  /** While the count changes: the merchant's prefix under the previous count, when it differs. */
  previousMerchantPrefix(merchantId: string): string | undefined {
    if (this.previousCount === undefined) return undefined;
    const previous = this.shardPrefix(merchantShard(merchantId, this.previousCount));
    return previous === this.merchantPrefix(merchantId) ? undefined : previous;
  }

  /** A new job id for this merchant: it names the merchant's shard. */
  newJobId(merchantId: string): string {
    return shardJobId(this.merchantShard(merchantId));
  }

  /** The prefix of a job's keys (its hash, its abort mark), read from its id. */
  jobPrefix(jobId: string): string {
    return this.shardPrefix(jobShard(jobId));
  }

  /**
   * Every shard that may hold jobs: those of the current count, and those of the previous one while the
   * count changes (null: the unsharded layout).
   */
  allShards(): Array<number | null> {
    const shards = new Set<number | null>(shardsOfCount(this.count));
    if (this.previousCount !== undefined) for (const shard of shardsOfCount(this.previousCount)) shards.add(shard);
    return [...shards];
  }

  /**
   * The shards this worker consumes: every shard, or those WORKER_SHARDS names (the unsharded layout,
   * during a move from 1, counts as shard 0; a previous count's shard by its number).
   */
  consumedShards(): Array<number | null> {
    const pinned = this.pinned;
    if (pinned === undefined) return this.allShards();
    return this.allShards().filter((shard) => pinned.includes(shard ?? 0));
  }
}

function shardsOfCount(count: number): Array<number | null> {
  return count <= 1 ? [null] : Array.from({ length: count }, (_, index) => index);
}
