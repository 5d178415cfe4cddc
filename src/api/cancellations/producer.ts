import type { Queue } from 'bullmq';
import type { Operation } from '../../shared/db/schema.js';
import { AppError, RETRY_SOON_SECONDS } from '../../shared/errors/errors.js';
import { type JobPayload, jobCatalogue } from '../../shared/jobs/job-catalogue.js';
import { MerchantTurns } from '../../shared/jobs/merchant-turns.js';
import { ShardedQueues } from '../../shared/jobs/queues.js';
import { noAnswerWithin, withDeadline } from '../../shared/process/deadline.js';
import type { RedisConnection } from '../../shared/redis/redis.js';
import { jobKey, queueNames } from '../../shared/redis/redis-keys.js';
import type { ShardLayout } from '../../shared/redis/shards.js';
import {
  activeContext,
  activeSpanUnsampled,
  currentTraceCarrier,
  inSpan,
  runInContext,
  type TraceCarrier,
  type TraceContext,
  tracingEnabled,
} from '../../shared/telemetry/trace-context.js';
import { recordJobOwner } from '../jobs/job-owner.js';
import { SingleCancelBatcher, type SingleCancelPayload, withdrawMember } from './single-cancel-batcher.js';

/**
 * A single cancel's payload with its request's trace context (`traceparent`, and `tracestate` when there
 * is one), for the coalesced write to link to: its batch job is shared by many requests, so BullMQ's own
 * trace context (queue-telemetry.ts) carries the batch's, not the requests'.
 * `Object.assign` rather than `{ ...payload, ...carrier }`: on Node 20 an object literal that spreads
 * and then adds a property leaves V8's fast path for the runtime's, ~1 µs against ~0.05 µs (a loop
 * of the cancel route's payloads, 2026-11-28), and nearly every cancel with tracing on makes one.
 */
function carrying<P extends object>(payload: P, carrier: TraceCarrier): P & TraceCarrier {
  return carrier.traceparent === undefined ? payload : Object.assign({}, payload, carrier);
}

export interface EnqueuedJob {
  jobId: string;
  /** True when an identical waiting request already had a job, and this one shares it. */
  shared: boolean;
}

export interface ProducerOptions {
  /** Which queue shard each merchant's work goes to (shards.ts). */
  layout: ShardLayout;
  /** How long the API waits for Redis to store a job before it answers 503. */
  timeoutMs: number;
  /** Operators' cap of waiting jobs per queue of each shard (0: none). */
  maxWaitingPerQueue: number;
}

type BulkJobName = Exclude<Operation, 'cancel'>;

/** What each operation stores: a single cancel joins a batch, a bulk operation is a job of its own. */
export type OperationPayload<O extends Operation> = O extends BulkJobName ? JobPayload<O> : SingleCancelPayload;

/**
 * The cause of a failed store whose outcome is not known: the deadline passed, or Redis failed while
 * the job was being added. The job may still be stored, under the id the caller chose: an idempotency
 * record that names that id must then stay (idempotency.ts), or a retry could queue a second job.
 */
class StoreOutcomeUnknownError extends Error {
  constructor(cause?: unknown) {
    super('the job may or may not have been stored', { cause });
    this.name = 'StoreOutcomeUnknownError';
  }
}

/** True when `error` (from `enqueue`) leaves open whether the job was stored. */
export function isStoreOutcomeUnknown(error: unknown): boolean {
  return error instanceof AppError && error.cause instanceof StoreOutcomeUnknownError;
}

/** How long a refused caller is asked to wait before it tries again: a backlog drains in seconds, not at once. */
const QUEUE_FULL_RETRY_SECONDS = 5;
/** A queue's waiting count is read again once it is older than this: one count a second per queue and process. */
const WAITING_COUNT_MAX_AGE_MS = 1_000;

/**
 * Turns accepted cancel requests into jobs. A job id is only ever returned once Redis has stored the
 * job; if Redis cannot take it within `timeoutMs` the caller gets SERVICE_UNAVAILABLE, never a hang.
 * Bulk jobs take a fair turn among merchants and a place under the merchant's cap first
 * (see merchant-turns.ts).
 */
export class CancellationProducer {
  private created: ShardedQueues | null = null;
  private readonly waiting = new Map<Queue, { count: number; checkedAt: number }>();
  private readonly turns: MerchantTurns;
  private readonly singles: SingleCancelBatcher;
  /** Read once: with tracing off, enqueue makes no span and copies no payload. */
  private readonly tracing = tracingEnabled();

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: ProducerOptions,
  ) {
    this.turns = new MerchantTurns(connection, options.layout);
    this.singles = new SingleCancelBatcher(
      connection,
      options.layout,
      (merchantId) => this.queues.forMerchant(merchantId).queues[queueNames.single],
    );
    // BullMQ reads the server version once when a queue is built, and with the offline queue off that
    // read fails while Redis is still connecting; so the queues are built once the connection is ready.
    if (connection.status === 'ready') this.createQueues();
    else connection.once('ready', () => this.createQueues());
  }

  /** Every queue of every shard (queues.ts), once Redis has been reached; until then every use is SERVICE_UNAVAILABLE. */
  get queues(): ShardedQueues {
    if (!this.created) {
      throw new AppError('SERVICE_UNAVAILABLE', undefined, {
        retryAfterSeconds: RETRY_SOON_SECONDS,
        logDetail: 'redis not reached yet',
      });
    }
    return this.created;
  }

  get ready(): boolean {
    return this.created !== null;
  }

  private createQueues(): void {
    if (!this.created) this.created = new ShardedQueues(this.connection, this.options.layout);
  }

  /**
   * Stores one job. `maxQueuedJobs` is the merchant's cap of bulk jobs queued or running (0: none);
   * single cancels are not capped (they are coalesced, and cost one row each), and are stored with the
   * other single cancels that arrived with them (single-cancel-batcher.ts).
   */
  async enqueue<N extends Operation>(
    name: N,
    payload: OperationPayload<N>,
    deduplicationId: string,
    maxQueuedJobs = 0,
    plannedJobId: string = this.options.layout.newJobId(payload.merchantId),
  ): Promise<EnqueuedJob> {
    if (!this.tracing) return this.store(name, payload, deduplicationId, maxQueuedJobs, plannedJobId);
    // A bulk job's `add` is BullMQ's span (queue-telemetry.ts), whose context the job carries to its worker.
    // The API's active context ends at the call stack (call-stack-context-manager.ts) and the add comes
    // after awaits, so the context is taken here and the add is made in it (addBulk).
    // An unsampled request has no enqueue span: nine requests in ten at 10 % sampling, each spared a
    // span. Its bulk job's `add` is made in the request's context all the same, so that the job carries
    // the decision and its worker records none of it either. A single cancel carries nothing: its trace
    // context is only ever a link from the coalesced write, and a link to a span recorded nowhere leads
    // nowhere, while the `traceparent` would be ~70 bytes more per request written to Redis.
    if (activeSpanUnsampled()) {
      return this.store(name, payload, deduplicationId, maxQueuedJobs, plannedJobId, activeContext());
    }
    return inSpan(
      `enqueue ${name}`,
      { kind: 'producer', attributes: { 'job.kind': name, 'merchant.id': payload.merchantId } },
      async (span) => {
        const traced = name === 'cancel' ? carrying(payload, currentTraceCarrier()) : payload;
        const enqueueContext = activeContext();
        const enqueued = await this.store(name, traced, deduplicationId, maxQueuedJobs, plannedJobId, enqueueContext);
        span.setAttributes({ 'job.id': enqueued.jobId, 'job.shared': enqueued.shared });
        return enqueued;
      },
    );
  }

  private async store<N extends Operation>(
    name: N,
    payload: OperationPayload<N>,
    deduplicationId: string,
    maxQueuedJobs: number,
    plannedJobId: string,
    traceContext?: TraceContext,
  ): Promise<EnqueuedJob> {
    const adding = { started: false };
    const shard = this.queues.forMerchant(payload.merchantId);
    if (name === 'cancel') {
      const queue = shard.queues[queueNames.single];
      const stored = await this.withinDeadline(adding, async () => {
        await this.refuseWhenFull(queue);
        adding.started = true;
        return this.singles.add(payload as SingleCancelPayload, deduplicationId);
      });
      return { jobId: stored.jobId, shared: stored.shared };
    }
    const bulkName = name as BulkJobName;
    const queueName = jobCatalogue[bulkName].queue;
    const queue = shard.queues[queueName];
    const jobId = plannedJobId;
    const job = await this.withinDeadline(adding, async () => {
      await this.refuseWhenFull(queue);
      const bulkPayload = payload as JobPayload<BulkJobName>;
      const added = { adding, traceContext };
      return this.addBulk(queue, bulkName, bulkPayload, jobId, deduplicationId, maxQueuedJobs, added);
    });
    const storedId = job.id ?? jobId;
    return { jobId: storedId, shared: storedId !== jobId };
  }

  /**
   * Whether Redis holds the bulk job `jobId` (its hash), for a retry of a store whose outcome was
   * unknown. A store cut short between BullMQ's add and the owner's field (job-owner.ts) has left a job
   * that job status cannot attribute: the owner is written here, so the id answered is found there.
   */
  async holdsJob(name: Operation, merchantId: string, jobId: string): Promise<boolean> {
    if (name === 'cancel') return false;
    const key = jobKey(this.options.layout.jobPrefix(jobId), jobCatalogue[name].queue, jobId);
    try {
      const timeoutMs = this.options.timeoutMs;
      return await withDeadline(recordJobOwner(this.connection, key, merchantId), timeoutMs, () =>
        noAnswerWithin(timeoutMs),
      );
    } catch (error) {
      throw new AppError('SERVICE_UNAVAILABLE', undefined, {
        retryAfterSeconds: RETRY_SOON_SECONDS,
        logDetail: 'redis',
        cause: error,
      });
    }
  }

  /**
   * Takes a job that no worker has started out of its queue (an abort): true when it was removed,
   * false when a worker holds it already (it will see the abort before its next batch).
   */
  async withdraw(name: Operation, merchantId: string, jobId: string): Promise<boolean> {
    // A member of a batch stays in it, marked: the worker that takes the batch skips it.
    if (name === 'cancel') return withdrawMember(this.connection, this.options.layout, jobId);
    const queueName = jobCatalogue[name].queue;
    const removed = (await this.queues.forJob(jobId).queues[queueName].remove(jobId)) === 1;
    if (removed && queueName === queueNames.bulk) await this.turns.finished(merchantId, jobId);
    return removed;
  }

  async close(): Promise<void> {
    if (this.created) await this.created.close();
  }

  private async addBulk(
    queue: Queue,
    name: BulkJobName,
    payload: JobPayload<BulkJobName>,
    jobId: string,
    deduplicationId: string,
    maxQueuedJobs: number,
    { adding, traceContext }: { adding: { started: boolean }; traceContext?: TraceContext },
  ) {
    // An identical request still waiting shares its job: that takes no new place under the cap.
    const waitingTwin = await queue.getDeduplicationJobId(deduplicationId);
    if (waitingTwin) {
      const twin = await queue.getJob(waitingTwin);
      if (twin) return twin;
    }
    const { merchantId } = payload;
    let outcome = await this.turns.takeTurn(merchantId, jobId, maxQueuedJobs);
    if (!outcome.accepted) {
      await this.turns.prune(merchantId, (ids) => this.liveJobs(ids));
      outcome = await this.turns.takeTurn(merchantId, jobId, maxQueuedJobs);
    }
    if (!outcome.accepted) {
      throw new AppError('RATE_LIMITED', `Too many bulk jobs queued or running for this merchant (${maxQueuedJobs})`, {
        retryAfterSeconds: QUEUE_FULL_RETRY_SECONDS,
        logDetail: `maxQueuedJobs ${maxQueuedJobs} reached`,
      });
    }
    try {
      adding.started = true;
      const options = { jobId, priority: outcome.turn, deduplication: { id: deduplicationId } };
      const add = () => queue.add(name, payload, options);
      // BullMQ reads the active context as `add` starts: the enqueue's (or an unsampled request's).
      const job = await (traceContext === undefined ? add() : runInContext(traceContext, add));
      // Lost a race with an identical request: this job was not stored, so its place is freed.
      if (job.id !== jobId) await this.turns.finished(merchantId, jobId);
      else
        await recordJobOwner(
          this.connection,
          jobKey(this.options.layout.jobPrefix(jobId), jobCatalogue[name].queue, jobId),
          merchantId,
        );
      return job;
    } catch (error) {
      await this.turns.finished(merchantId, jobId).catch(() => {});
      throw error;
    }
  }

  /** Which of these bulk jobs still exist and have not finished (O(1) per job: its own hash). */
  private async liveJobs(jobIds: string[]): Promise<boolean[]> {
    return Promise.all(
      jobIds.map(async (id) => {
        const key = jobKey(this.options.layout.jobPrefix(id), queueNames.bulk, id);
        const [name, finishedOn] = await this.connection.hmget(key, 'name', 'finishedOn');
        return name !== null && finishedOn === null;
      }),
    );
  }

  /**
   * Backpressure: past QUEUE_MAX_WAITING waiting jobs in a queue the API asks callers to come back
   * later. Counted per queue of each shard (a backlog of bulk jobs does not refuse single cancels, nor one
   * shard's backlog the merchants of another), at most once a second per queue and process.
   */
  private async refuseWhenFull(queue: Queue): Promise<void> {
    const max = this.options.maxWaitingPerQueue;
    if (max === 0) return;
    const now = Date.now();
    let known = this.waiting.get(queue);
    if (!known || now - known.checkedAt > WAITING_COUNT_MAX_AGE_MS) {
      known = { count: await queue.getJobCountByTypes('wait', 'prioritized'), checkedAt: now };
      this.waiting.set(queue, known);
    }
    if (known.count >= max) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Queue is over capacity, retry later', {
        retryAfterSeconds: QUEUE_FULL_RETRY_SECONDS,
        logDetail: `${queue.qualifiedName}: waiting ${known.count} >= ${max}`,
      });
    }
  }

  /**
   * Past the deadline the work goes on unseen (it may still store the job), so a timeout's outcome is
   * unknown; so is a Redis failure once the job's writes have started. A refusal (cap, full queue) or a
   * failure before them stored nothing.
   */
  private async withinDeadline<T>(adding: { started: boolean }, work: () => Promise<T>): Promise<T> {
    try {
      return await withDeadline(work(), this.options.timeoutMs, () => {
        throw new AppError('SERVICE_UNAVAILABLE', undefined, {
          retryAfterSeconds: RETRY_SOON_SECONDS,
          logDetail: 'redis timeout',
          cause: new StoreOutcomeUnknownError(),
        });
      });
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError('SERVICE_UNAVAILABLE', undefined, {
        retryAfterSeconds: RETRY_SOON_SECONDS,
        logDetail: 'redis',
        cause: adding.started ? new StoreOutcomeUnknownError(error) : error,
      });
    }
  }
}
