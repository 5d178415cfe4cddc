import { batchIdOf } from '../../../shared/cancellations/member-ids.js';
import { AppError, RETRY_SOON_SECONDS } from '../../../shared/errors/errors.js';
import type { JobStatus } from '../../../shared/jobs/job-status-schema.js';
import { isFinished } from '../../../shared/jobs/public-status.js';
import { type QueueName, queueNames } from '../../../shared/redis/redis-keys.js';
import type { Logger } from '../../../shared/telemetry/logger.js';
import { JobEventFeed } from './job-event-feed.js';
import { JobSubscription } from './job-subscription.js';

/** Reads one job's status (job-status.ts findJobStatus): from Redis while BullMQ holds it, else Postgres. */
type JobStatusReader = (jobId: string, merchantId: string) => Promise<JobStatus | null>;

/** One job followed by one or more streams: its status is read once for all of them. */
interface Watch {
  jobId: string;
  merchantId: string;
  subscribers: Set<JobSubscription>;
  status: JobStatus;
  reading: boolean;
  /** An event came while a read was under way (or waiting its turn): read once more after it. */
  again: boolean;
  lastReadAt: number;
  timer: NodeJS.Timeout | null;
}

export interface JobEventHubOptions {
  feed: Omit<ConstructorParameters<typeof JobEventFeed>[0], 'onEvent' | 'logger'>;
  readStatus: JobStatusReader;
  logger: Logger;
  maxStreams: number;
  maxStreamsPerMerchant: number;
  recheckMs: number;
  /** The least time between two reads of one job (and so between two progress events). */
  minReadIntervalMs?: number;
}

/** One read a second per job at most: progress is shown per second, and a busy job's events cost no more. */
const MIN_READ_INTERVAL_MS = 1_000;
/** A client refused for too many open streams tries again later than a momentary refusal: a stream lasts minutes. */
const STREAMS_FULL_RETRY_SECONDS = 5;

/**
 * The job event streams of one API process: one feed of queue events (job-event-feed.ts) fanned out to
 * every stream. A watched job's status is read when its stream opens and again when an event names it
 * (at most once a second per job, whatever the number of its streams), and every `recheckMs` in case an
 * event was lost. A job with no event costs nothing; no stream polls Postgres.
 */
export class JobEventHub {
  private readonly feed: JobEventFeed;
  private readonly watches = new Map<string, Watch>();
  /** Single cancels by their batch: BullMQ's events name the batch (member-ids.ts). */
  private readonly byBatch = new Map<string, Set<string>>();
  private readonly perMerchant = new Map<string, number>();
  private open = 0;
  private closed = false;
  private readonly recheck: NodeJS.Timeout;
  private readonly minReadIntervalMs: number;

  constructor(private readonly options: JobEventHubOptions) {
    this.feed = new JobEventFeed({
      ...options.feed,
      logger: options.logger,
      onEvent: (queueName, jobId) => this.onEvent(queueName, jobId),
    });
    this.minReadIntervalMs = options.minReadIntervalMs ?? MIN_READ_INTERVAL_MS;
    this.recheck = setInterval(() => {
      for (const watch of this.watches.values()) this.scheduleRead(watch);
    }, options.recheckMs);
    this.recheck.unref();
  }

  /** Streams open now (for the metrics and the tests). */
  get openStreams(): number {
    return this.open;
  }

  /**
   * Opens a subscription to a merchant's job: null when there is no such job of that merchant. Past the
   * process's or the merchant's bound, 429 (errorCode 7); while the process closes, 503.
   */
  async subscribe(jobId: string, merchantId: string): Promise<JobSubscription | null> {
    if (this.closed)
      throw new AppError('SERVICE_UNAVAILABLE', 'Shutting down', { retryAfterSeconds: RETRY_SOON_SECONDS });
    const held = this.perMerchant.get(merchantId) ?? 0;
    if (this.open >= this.options.maxStreams || held >= this.options.maxStreamsPerMerchant) {
      const bound =
        held >= this.options.maxStreamsPerMerchant
          ? `${this.options.maxStreamsPerMerchant} per merchant`
          : `${this.options.maxStreams} per server`;
      throw new AppError('RATE_LIMITED', `Too many job event streams open (${bound})`, {
        retryAfterSeconds: STREAMS_FULL_RETRY_SECONDS,
        logDetail: `job event streams: ${bound}`,
      });
    }
    // Counted before the first await: streams opened together cannot all pass the bound.
    this.take(merchantId);
    try {
      const jobKey = jobId.toLowerCase();
      let watch = this.watches.get(jobKey);
      if (!watch) {
        await this.feed.follow(jobKey).catch((error: unknown) => {
          throw new AppError('SERVICE_UNAVAILABLE', undefined, {
            retryAfterSeconds: RETRY_SOON_SECONDS,
            logDetail: 'redis',
            cause: error,
          });
        });
        // Read after the feed follows the job's shard: a change from here on comes as an event.
        const status = await this.options.readStatus(jobKey, merchantId);
        if (!status || status.merchantId !== merchantId) {
          this.release(merchantId);
          return null;
        }
        // Another stream may have started watching while this one read.
        watch = this.watches.get(jobKey) ?? this.addWatch(jobKey, status);
      }
      if (watch.merchantId !== merchantId) {
        this.release(merchantId);
        return null;
      }
      const subscription = new JobSubscription(watch.status, this.minReadIntervalMs, () =>
        this.unsubscribe(watch, subscription),
      );
      watch.subscribers.add(subscription);
      return subscription;
    } catch (error) {
      this.release(merchantId);
      throw error;
    }
  }

  /** Tells every process's streams of a job that it was aborted (BullMQ writes no event for all aborts). */
  announceAborted(jobId: string, operation: JobStatus['operation']): Promise<void> {
    return this.feed.announceAborted(jobId, operation === 'cancel' ? queueNames.single : queueNames.bulk);
  }

  /** Ends every stream (each sends nothing more and closes), then stops the feed. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.recheck);
    for (const watch of this.watches.values()) {
      if (watch.timer) clearTimeout(watch.timer);
      for (const subscription of watch.subscribers) subscription.close();
    }
    await this.feed.close();
  }

  private take(merchantId: string): void {
    this.open++;
    this.perMerchant.set(merchantId, (this.perMerchant.get(merchantId) ?? 0) + 1);
  }

  private release(merchantId: string): void {
    this.open--;
    const left = (this.perMerchant.get(merchantId) ?? 1) - 1;
    if (left <= 0) this.perMerchant.delete(merchantId);
    else this.perMerchant.set(merchantId, left);
  }

  private addWatch(jobId: string, status: JobStatus): Watch {
    const watch: Watch = {
      jobId,
      merchantId: status.merchantId,
      subscribers: new Set(),
      status,
      reading: false,
      again: false,
      lastReadAt: Date.now(),
      timer: null,
    };
    this.watches.set(jobId, watch);
    if (status.operation === 'cancel') {
      const batchId = batchIdOf(jobId);
      const members = this.byBatch.get(batchId) ?? new Set<string>();
      members.add(jobId);
      this.byBatch.set(batchId, members);
    }
    return watch;
  }

  private unsubscribe(watch: Watch, subscription: JobSubscription): void {
    if (!watch.subscribers.delete(subscription)) return;
    this.release(watch.merchantId);
    if (watch.subscribers.size > 0) return;
    if (watch.timer) clearTimeout(watch.timer);
    this.watches.delete(watch.jobId);
    const batchId = batchIdOf(watch.jobId);
    const members = this.byBatch.get(batchId);
    members?.delete(watch.jobId);
    if (members?.size === 0) this.byBatch.delete(batchId);
  }

  private onEvent(queueName: QueueName, eventJobId: string): void {
    // A part's id starts with its job's (job-catalogue.ts partJobId); a batch's events stand for its members.
    const id = eventJobId.split('.')[0]?.toLowerCase() ?? '';
    if (queueName === queueNames.single) {
      for (const member of this.byBatch.get(batchIdOf(id)) ?? []) {
        const watch = this.watches.get(member);
        if (watch) this.scheduleRead(watch);
      }
      return;
    }
    const watch = this.watches.get(id);
    if (watch) this.scheduleRead(watch);
  }

  /** Reads the job now, or when its last read is a second old; events meanwhile make one read. */
  private scheduleRead(watch: Watch): void {
    if (watch.reading || watch.timer) {
      watch.again = true;
      return;
    }
    const wait = Math.max(0, watch.lastReadAt + this.minReadIntervalMs - Date.now());
    watch.timer = setTimeout(() => {
      watch.timer = null;
      void this.read(watch);
    }, wait);
  }

  private async read(watch: Watch): Promise<void> {
    if (this.watches.get(watch.jobId) !== watch) return;
    watch.reading = true;
    watch.again = false;
    watch.lastReadAt = Date.now();
    try {
      const status = await this.options.readStatus(watch.jobId, watch.merchantId);
      // Gone (its retention passed while watched): its last status stands; the recheck ends nothing.
      if (status) {
        watch.status = status;
        for (const subscription of watch.subscribers) subscription.update(status);
      }
    } catch (error) {
      this.options.logger.warn({ err: error, jobId: watch.jobId }, 'job event stream: status not read, will retry');
      watch.again = true;
    } finally {
      watch.reading = false;
    }
    if (watch.again && !isFinished(watch.status.state)) this.scheduleRead(watch);
  }
}
