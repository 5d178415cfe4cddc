import type { Job, Worker } from 'bullmq';
import { announceEnd, recordEnds } from '../../../shared/jobs/job-end.js';
import { inJobTrace, type QueueTelemetry } from '../../../shared/jobs/queue-telemetry.js';
import { queueNames } from '../../../shared/redis/redis-keys.js';
import type { WorkerDeps } from '../../worker-context.js';
import { DeferredSliceLister } from './deferred-slice-lister.js';
import { taken } from './job-start.js';
import { listAfterCompletion, listBeforeCompletion } from './listing.js';
import { decideCompleted, decideFailed, isMerchantJob, type RunEnd } from './run-end.js';
import { dropIdentifiers, keepAuditRows, logCompleted, observeDuration, releaseTurn } from './sinks.js';

type JobProcessor = (job: Job, token?: string) => Promise<unknown>;

/**
 * The one place a BullMQ job ends. `wrap` goes around every processor: when the processor returns, the
 * run's outcome is decided once (run-end.ts; a merchant's job reads its abort mark there, atomically with
 * the decision) and handed, as decided, to the sinks (sinks.ts, listing.ts, the shared audit row and
 * webhook event). A last failed attempt is decided on BullMQ's 'failed' event, the only place a worker
 * learns that an attempt was the last (attempts, backoff, an unrecoverable error, a job stalled too often).
 *
 * The sinks run in two steps:
 * - before the processor's answer goes back to BullMQ: the listing of a small by-query job and the audit
 *   row of a merchant's job (the row says `completed` before Redis does);
 * - once BullMQ has marked the job completed (its 'completed' event: BullMQ has no later place a worker
 *   can await): the webhook event (a merchant that asks for the status on the event must find the job
 *   completed, and its `finishedAt` is BullMQ's `finishedOn`, the time the status route answers), the
 *   metric and log line timed with it, the merchant's turn (the job keeps its place under the cap until
 *   BullMQ can no longer run it), its identifiers (a job not completed may run again and needs them), and
 *   the listing of a large by-query job. The decided end waits for that event beside the job object
 *   BullMQ hands to it (the same object the processor ran).
 * The single cancels of a batch end in member-ends.ts, through the same sinks.
 */
export class JobEnds {
  private readonly decided = new WeakMap<Job, RunEnd>();
  private readonly running = new Set<Promise<void>>();
  private readonly lister: DeferredSliceLister;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly telemetry: QueueTelemetry,
  ) {
    this.lister = new DeferredSliceLister(deps);
  }

  /** The processor, with its job's start (`taken`) and its end decided once and recorded before BullMQ hears of it. */
  wrap(processor: JobProcessor): JobProcessor {
    return async (job, token) => {
      await taken(this.deps, job);
      const result = await processor(job, token);
      const run = await decideCompleted(this.deps, job, result);
      await listBeforeCompletion(this.deps, run);
      await recordEnds(this.deps.db, run.ends);
      this.decided.set(job, run);
      return result;
    };
  }

  /** Hands the worker's events about a job's end to the sinks, each in the job's trace context. */
  observe(worker: Worker): void {
    worker.on('completed', (job) => {
      const run = this.decided.get(job);
      this.decided.delete(job);
      if (run) this.track(inJobTrace(this.telemetry, job, () => this.completed(run)));
    });
    worker.on('failed', (job, error) => {
      if (job) this.track(inJobTrace(this.telemetry, job, () => this.attemptFailed(job, error)));
    });
  }

  start(): void {
    this.lister.start();
  }

  /** Waits for the end steps in flight (so closing the workers waits for them), then stops the lister. */
  async close(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    await this.lister.close();
  }

  private track(step: Promise<void>): void {
    this.running.add(step);
    void step.finally(() => this.running.delete(step));
  }

  /** BullMQ has marked the job completed: the sinks that must come after that mark. */
  private async completed(decided: RunEnd): Promise<void> {
    const { job } = decided;
    const finishedAt = job.finishedOn ?? Date.now();
    const run: RunEnd = { ...decided, ends: decided.ends.map((end) => ({ ...end, finishedAt })) };
    const ms = finishedAt - (job.processedOn ?? job.timestamp);
    const { merchantId, requestId } = job.data as { merchantId?: string; requestId?: string };
    const merchantJob = isMerchantJob(job);
    // A merchant's job is counted with its decided outcome (completed, or cancelled on an abort).
    observeDuration(this.deps, job.name, merchantJob ? (run.ends[0]?.state ?? run.state) : run.state, ms);
    logCompleted(this.deps, merchantJob ? 'info' : 'debug', {
      jobId: job.id as string,
      merchantId,
      requestId,
      operation: job.name,
      counts: run.result,
      ms,
    });
    listAfterCompletion(this.lister, run);
    const steps: Promise<unknown>[] = run.ends.map((end) => announceEnd(this.deps.webhooks, end));
    if (job.queueName === queueNames.bulk && merchantId)
      steps.push(releaseTurn(this.deps, merchantId, job.id as string));
    // A batch of single cancels drops its requests (each one's outcome is in its own audit row).
    if (job.queueName === queueNames.bulk || job.name === 'cancelBatch') steps.push(dropIdentifiers(job));
    await Promise.all(steps);
  }

  /** A failed attempt: logged, and when it was the last one, the job's end, decided here. */
  private async attemptFailed(job: Job, error: Error): Promise<void> {
    const { merchantId, requestId } = job.data as { merchantId?: string; requestId?: string };
    const final = (await job.getState().catch(() => 'unknown')) === 'failed';
    const ms = Date.now() - (job.processedOn ?? job.timestamp);
    this.deps.logger[final ? 'error' : 'warn'](
      { jobId: job.id, merchantId, requestId, operation: job.name, attempt: job.attemptsMade, final, err: error, ms },
      final ? 'job failed' : 'job attempt failed; will retry',
    );
    if (!final) return;
    observeDuration(this.deps, job.name, 'failed', ms);
    const run = await decideFailed(this.deps, job, error);
    // A part or job with nothing of the merchant's to end (no merchant, no root) leaves its data as it is.
    if (run.ends.length === 0 && job.name !== 'cancelBatch') return;
    await keepAuditRows(this.deps, run.ends).catch((writeError: unknown) =>
      this.deps.logger.error({ err: writeError, jobId: job.id }, 'could not record job failure'),
    );
    // A part frees its merchant's job's place under the cap.
    const merchantJob = run.ends[0];
    if (job.queueName === queueNames.bulk && merchantJob) {
      await releaseTurn(this.deps, merchantJob.merchantId, merchantJob.jobId);
    }
    await dropIdentifiers(job);
    for (const end of run.ends) await announceEnd(this.deps.webhooks, end);
  }
}
