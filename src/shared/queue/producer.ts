import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { AppError } from '../errors.js';
import {
  defaultJobOptions,
  type JobPayload,
  jobCatalogue,
  type MerchantJobName,
  newJobId,
  type QueueName,
  queueNames,
} from './job-catalogue.js';

export interface EnqueuedJob {
  jobId: string;
  /** True when an identical waiting request already had a job, and this one shares it. */
  shared: boolean;
}

/**
 * Turns accepted cancel requests into jobs. A job id is only ever returned once Redis has stored the
 * job; if Redis cannot take it within `timeoutMs` the caller gets SERVICE_UNAVAILABLE, never a hang.
 */
export class CancellationProducer {
  private created: Record<QueueName, Queue> | null = null;
  private waitingCount = 0;
  private waitingCheckedAt = 0;

  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    private readonly timeoutMs: number,
    private readonly maxWaiting: number,
  ) {
    // BullMQ reads the server version once when a queue is built, and with the offline queue off that
    // read fails while Redis is still connecting; so the queues are built once the connection is ready.
    if (connection.status === 'ready') this.createQueues();
    else connection.once('ready', () => this.createQueues());
  }

  /** The queues, once Redis has been reached; until then every use is SERVICE_UNAVAILABLE. */
  get queues(): Record<QueueName, Queue> {
    if (!this.created) {
      throw new AppError('SERVICE_UNAVAILABLE', undefined, {
        retryAfterSeconds: 1,
        logDetail: 'redis not reached yet',
      });
    }
    return this.created;
  }

  get ready(): boolean {
    return this.created !== null;
  }

  private createQueues(): void {
    if (this.created) return;
    const options = { connection: this.connection, prefix: this.prefix, defaultJobOptions, skipWaitingForReady: true };
    this.created = {
      [queueNames.single]: new Queue(queueNames.single, options),
      [queueNames.bulk]: new Queue(queueNames.bulk, options),
    } as Record<QueueName, Queue>;
    for (const queue of Object.values(this.created)) queue.on('error', () => {});
  }

  async enqueue<N extends MerchantJobName>(
    name: N,
    payload: JobPayload<N>,
    deduplicationId: string,
  ): Promise<EnqueuedJob> {
    const queue = this.queues[jobCatalogue[name].queue];
    const jobId = newJobId();
    const job = await this.withinDeadline(async () => {
      await this.refuseWhenFull(queue);
      return queue.add(name, payload, { jobId, deduplication: { id: deduplicationId } });
    });
    const storedId = job.id ?? jobId;
    return { jobId: storedId, shared: storedId !== jobId };
  }

  async close(): Promise<void> {
    if (this.created) await Promise.all(Object.values(this.created).map((queue) => queue.close()));
  }

  /** Backpressure: past QUEUE_MAX_WAITING jobs the API asks callers to come back later. */
  private async refuseWhenFull(queue: Queue): Promise<void> {
    if (this.maxWaiting === 0) return;
    const now = Date.now();
    if (now - this.waitingCheckedAt > 1_000) {
      this.waitingCheckedAt = now;
      this.waitingCount = await queue.getWaitingCount();
    }
    if (this.waitingCount >= this.maxWaiting) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Queue is over capacity, retry later', {
        retryAfterSeconds: 5,
        logDetail: `waiting ${this.waitingCount} >= ${this.maxWaiting}`,
      });
    }
  }

  private async withinDeadline<T>(work: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new AppError('SERVICE_UNAVAILABLE', undefined, { retryAfterSeconds: 1, logDetail: 'redis timeout' })),
        this.timeoutMs,
      );
    });
    try {
      return await Promise.race([work(), deadline]);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError('SERVICE_UNAVAILABLE', undefined, { retryAfterSeconds: 1, logDetail: 'redis', cause: error });
    } finally {
      clearTimeout(timer);
    }
  }
}
