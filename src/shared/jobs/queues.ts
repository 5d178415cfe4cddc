import { Queue } from 'bullmq';
import type { RedisConnection } from '../redis/redis.js';
import { type QueueName, queueNames } from '../redis/redis-keys.js';
import { jobShard, type ShardLayout } from '../redis/shards.js';
import { webhookJobOptions, webhookQueueName } from '../webhooks/webhook-catalogue.js';
import { defaultJobOptions } from './job-catalogue.js';
import { queueTelemetry } from './queue-telemetry.js';

/** The two cancellation queues of one shard, by name. */
type CancellationQueues = Record<QueueName, Queue>;

/** One queue shard: its number (null: the unsharded layout), its key prefix and its queues. */
export interface QueueShard {
  shard: number | null;
  prefix: string;
  queues: CancellationQueues;
}

/** A queue as the dashboard and `gateway_queue_jobs` list it: its name and its shard ('' when none). */
export interface ListedQueue {
  name: string;
  shard: string;
  queue: Queue;
}

/**
 * Every queue of the service on one connection: the cancellation queues of every shard (shards.ts) and
 * the webhooks queue. The one place a Queue is built, so every process (API producer, worker, tests)
 * shares the prefixes, the default job options and the error guard, and the dashboard and
 * `gateway_queue_jobs` list them all. Built once per process and passed down.
 */
export class ShardedQueues {
  readonly webhooks: Queue;
  private readonly shards = new Map<string, QueueShard>();
  /** BullMQ's spans of every add and every queue operation (queue-telemetry.ts). */
  private readonly telemetry = queueTelemetry();

  constructor(
    private readonly connection: RedisConnection,
    readonly layout: ShardLayout,
  ) {
    // No request waits on a webhook event: it may wait for Redis (the notifier bounds how long it is held).
    this.webhooks = new Queue(webhookQueueName, {
      connection,
      prefix: layout.prefix,
      defaultJobOptions: webhookJobOptions,
      telemetry: this.telemetry,
    });
    // Connection trouble surfaces through failing commands; an unheard 'error' event would end the process.
    this.webhooks.on('error', () => {});
    for (const shard of layout.allShards()) this.forShard(shard);
  }

  /** A shard's queues (built on first use: a job of a shard outside the current counts is still found). */
  forShard(shard: number | null): QueueShard {
    const prefix = this.layout.shardPrefix(shard);
    let found = this.shards.get(prefix);
    if (!found) {
      // skipWaitingForReady: a producer whose Redis is away must fail its command at once (503), not wait.
      const options = {
        connection: this.connection,
        prefix,
        defaultJobOptions,
        skipWaitingForReady: true,
        telemetry: this.telemetry,
      };
      const queues: CancellationQueues = {
        [queueNames.single]: new Queue(queueNames.single, options),
        [queueNames.bulk]: new Queue(queueNames.bulk, options),
      };
      for (const queue of Object.values(queues)) queue.on('error', () => {});
      found = { shard, prefix, queues };
      this.shards.set(prefix, found);
    }
    return found;
  }

  /** The shard new work of this merchant goes to. */
  forMerchant(merchantId: string): QueueShard {
    return this.forShard(this.layout.merchantShard(merchantId));
  }

  /** The shard holding a job (its id names it). */
  forJob(jobId: string): QueueShard {
    return this.forShard(jobShard(jobId));
  }

  /** Every shard that may hold jobs (the current count's, and the previous count's while it changes). */
  list(): QueueShard[] {
    return this.layout.allShards().map((shard) => this.forShard(shard));
  }

  /** Every queue, named for the dashboard and the metrics. */
  listed(): ListedQueue[] {
    const cancellation = this.list().flatMap(({ shard, queues }) =>
      Object.entries(queues).map(([name, queue]) => ({ name, shard: shard === null ? '' : String(shard), queue })),
    );
    return [...cancellation, { name: webhookQueueName, shard: '', queue: this.webhooks }];
  }

  async close(): Promise<void> {
    const queues = [...this.shards.values()].flatMap(({ queues }) => Object.values(queues));
    await Promise.all([...queues, this.webhooks].map((queue) => queue.close()));
  }
}
