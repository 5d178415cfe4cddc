import type { Redis } from 'ioredis';
import type pg from 'pg';
import { readRssMiB } from '../lib/memory-sampler.js';
import { round } from '../lib/percentiles.js';
import { sleep } from '../lib/progress.js';
import type { QueueKeys } from '../lib/queue-keys.js';
import { redisMemoryMiB } from '../lib/redis-memory-sampler.js';

/** The service's own records (src/shared/db/schema.ts): what retention must keep from growing. */
const OWN_TABLES = [
  'cancellation_jobs',
  'job_rewards',
  'job_cancel_slices',
  'job_unapplied_identifiers',
  'webhook_deliveries',
  'sessions',
  'bet_slip_items',
] as const;

const MIB = 1024 * 1024;

export interface SoakSample {
  /** Seconds since the traffic began (negative: before it). */
  atS: number;
  /** pg_total_relation_size (heap, indexes, TOAST) of each own table, MiB. */
  tablesMiB: Record<string, number>;
  ownTablesMiB: number;
  rewardsMiB: number;
  redisUsedMiB: number | null;
  redisKeys: number | null;
  apiRssMiB: number | null;
  workerRssMiB: number | null;
  /** webhook_deliveries of the dead receiver's merchant still pending. */
  deadPendingDeliveries: number | null;
  /** The webhooks queue (all merchants): jobs waiting, delayed (retries) and active. */
  webhookQueue: { waiting: number; delayed: number; active: number } | null;
}

/**
 * Every `intervalS` seconds, one reading of everything the soak judges growth by. A reading that
 * fails (a slow reply) leaves a gap (null), not a failed run.
 */
export class SoakSampler {
  readonly samples: SoakSample[] = [];
  private running = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: {
      pool: pg.Pool;
      redis: Redis;
      queue: QueueKeys;
      apiPid: number;
      workerPid: number;
      deadMerchantId: string;
      /** Epoch of the traffic's start, in performance.now() ms. */
      origin: () => number;
    },
    private readonly intervalS: number,
  ) {}

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        const began = performance.now();
        // A failed reading (a slow reply) is a gap in the series, not a failed run.
        await this.sample().catch(() => undefined);
        // In short steps, so that stop() does not wait out a whole interval.
        while (this.running && performance.now() - began < this.intervalS * 1000) await sleep(200);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  async sample(): Promise<SoakSample> {
    const { pool, redis, queue, apiPid, workerPid, deadMerchantId } = this.deps;
    const atS = round((performance.now() - this.deps.origin()) / 1000, 1);
    const [sizes, redisUsedMiB, redisKeys, apiRssMiB, workerRssMiB, deadPending, counts] = await Promise.all([
      pool.query<{ name: string; bytes: string }>(
        // A partitioned table (rewards) has no storage of its own: its size is its partitions'.
        `SELECT name, coalesce(
           (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree(name::regclass)),
           pg_total_relation_size(name::regclass))::text AS bytes
         FROM unnest($1::text[]) AS name`,
        [[...OWN_TABLES, 'rewards']],
      ),
      redisMemoryMiB(redis).catch(() => null),
      queue.countKeys().catch(() => null),
      readRssMiB(apiPid),
      readRssMiB(workerPid),
      pool
        .query<{ count: string }>(
          "SELECT count(*) AS count FROM webhook_deliveries WHERE merchant_id = $1 AND state = 'pending'",
          [deadMerchantId],
        )
        .then(({ rows }) => Number(rows[0]?.count ?? 0))
        .catch(() => null),
      queue.jobCounts('webhooks').catch(() => null),
    ]);
    const tablesMiB: Record<string, number> = {};
    for (const row of sizes.rows) tablesMiB[row.name] = round(Number(row.bytes) / MIB, 3);
    const ownTablesMiB = round(
      OWN_TABLES.reduce((sum, name) => sum + (tablesMiB[name] ?? 0), 0),
      3,
    );
    const sample: SoakSample = {
      atS,
      tablesMiB,
      ownTablesMiB,
      rewardsMiB: tablesMiB.rewards ?? 0,
      redisUsedMiB: redisUsedMiB === null ? null : round(redisUsedMiB, 2),
      redisKeys,
      apiRssMiB: apiRssMiB === null ? null : round(apiRssMiB, 1),
      workerRssMiB: workerRssMiB === null ? null : round(workerRssMiB, 1),
      deadPendingDeliveries: deadPending,
      webhookQueue: counts
        ? { waiting: counts.waiting ?? 0, delayed: counts.delayed ?? 0, active: counts.active ?? 0 }
        : null,
    };
    this.samples.push(sample);
    return sample;
  }
}
