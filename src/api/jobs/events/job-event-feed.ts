import { QueueEvents, QueueEventsProducer } from 'bullmq';
import type { RedisConnection } from '../../../shared/redis/redis.js';
import { type QueueName, queueNames } from '../../../shared/redis/redis-keys.js';
import type { ShardLayout } from '../../../shared/redis/shards.js';
import type { Logger } from '../../../shared/telemetry/logger.js';

/** A job of a queue had something happen to it (its id as the event names it: a part's, a batch's). */
export type QueueJobEvent = (queueName: QueueName, jobId: string) => void;

/** The event our abort route adds beside BullMQ's own: a withdrawn single cancel has no event of BullMQ's. */
const ABORTED_EVENT = 'jobAborted';

/** BullMQ's default length of a queue's event stream: announcing must not trim it shorter. */
const EVENT_STREAM_LENGTH = 10_000;

/**
 * The API process's one subscription to what happens to jobs: BullMQ's `QueueEvents` (a blocking XREAD on
 * each queue's event stream, which BullMQ writes for every job anyway: progress, completed, failed,
 * removed, active), one per queue of each shard, started on the first stream that needs that shard and
 * kept until the process closes. Whatever the number of streams, that is 2 connections per shard.
 *
 * Why this and not a pub/sub channel of our own: the workers, the abort route and BullMQ's own scripts
 * (a part failing its parent, a job removed) already write every change to these streams; a channel
 * would need a publish at each of those places, and pub/sub forgets what is sent while the API
 * reconnects, where a stream read resumes from the last entry it saw.
 *
 * A reader starts after the stream's last entry at the time it starts (read here first), so an event
 * between that read and BullMQ's first XREAD is not missed.
 */
export class JobEventFeed {
  private readonly readers = new Map<string, Promise<QueueEvents>>();
  private readonly announcers = new Map<string, QueueEventsProducer>();
  private closed = false;

  constructor(
    private readonly options: {
      /** A patient connection ('worker' role): BullMQ duplicates it for each blocking reader. */
      connection: () => RedisConnection;
      /** For XREVRANGE and the announcements: a connection that fails fast. */
      redis: RedisConnection;
      shards: ShardLayout;
      /** After the readers have stopped: the connection they were duplicated from. */
      onClose?: () => Promise<void>;
      logger: Logger;
      onEvent: QueueJobEvent;
    },
  ) {}

  /** Resolves once both queues of the job's shard are followed. */
  async follow(jobId: string): Promise<void> {
    const prefix = this.options.shards.jobPrefix(jobId);
    await Promise.all([this.reader(prefix, queueNames.bulk), this.reader(prefix, queueNames.single)]);
  }

  /** Tells every API process's streams that a job changed where BullMQ writes no event (an abort). */
  async announceAborted(jobId: string, queueName: QueueName): Promise<void> {
    const prefix = this.options.shards.jobPrefix(jobId);
    const key = `${prefix}\u0000${queueName}`;
    let announcer = this.announcers.get(key);
    if (!announcer) {
      announcer = new QueueEventsProducer(queueName, { connection: this.options.redis, prefix });
      announcer.on('error', () => {});
      this.announcers.set(key, announcer);
    }
    await announcer.publishEvent({ eventName: ABORTED_EVENT, jobId }, EVENT_STREAM_LENGTH);
  }

  async close(): Promise<void> {
    this.closed = true;
    const readers = await Promise.allSettled(this.readers.values());
    await Promise.all(
      readers.flatMap((settled) => (settled.status === 'fulfilled' ? [settled.value.close().catch(() => {})] : [])),
    );
    await Promise.all([...this.announcers.values()].map((announcer) => announcer.close().catch(() => {})));
    await this.options.onClose?.();
  }

  private reader(prefix: string, queueName: QueueName): Promise<QueueEvents> {
    const key = `${prefix}\u0000${queueName}`;
    let reader = this.readers.get(key);
    if (!reader) {
      reader = this.start(prefix, queueName);
      // A failed start (Redis away) is tried again by the next stream.
      reader.catch(() => this.readers.delete(key));
      this.readers.set(key, reader);
    }
    return reader;
  }

  private async start(prefix: string, queueName: QueueName): Promise<QueueEvents> {
    if (this.closed) throw new Error('job event feed closed');
    const eventsKey = `${prefix}:${queueName}:events`;
    const last = (await this.options.redis.xrevrange(eventsKey, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
    const events = new QueueEvents(queueName, {
      connection: this.options.connection(),
      prefix,
      lastEventId: last,
    });
    // Connection trouble: BullMQ reconnects and reads on from the last entry it saw.
    events.on('error', (error) => this.options.logger.warn({ err: error, queueName, prefix }, 'job event feed'));
    const forward = ({ jobId }: { jobId?: string }) => {
      if (jobId) this.options.onEvent(queueName, jobId);
    };
    for (const name of ['progress', 'completed', 'failed', 'removed', 'active', 'waiting-children', ABORTED_EVENT]) {
      events.on(name as 'progress', forward);
    }
    return events;
  }
}
