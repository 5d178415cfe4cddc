import {
  type JobKey,
  jobsWithOldDeferredSlices,
  listDeferredSlices,
} from '../../../shared/jobs/job-rewards.repository.js';
import type { WorkerDeps } from '../../worker-context.js';

/** How often the lister looks for slices nobody listed (a worker stopped between a job's end and its listing). */
const CATCH_UP_EVERY_MS = 10_000;
/** A slice noted this long ago and still there was left behind: its job is long past its last statement. */
const LEFT_BEHIND_AFTER_MS = 60_000;

/**
 * Lists the deferred slices of large by-query jobs once they have completed, off the job's critical
 * path: a job of more than `LISTED_BEFORE_COMPLETION` rewards (listing.ts) is reported completed as soon as its
 * rewards are cancelled (a million rewards' listing takes over a second, about as long as the cancel
 * itself), and its pages answer 409 with Retry-After until this lister has listed it, moments later.
 * The API only reads.
 *
 * Woken by the completion of a job on this worker (`list`), and every CATCH_UP_EVERY_MS for slices
 * older than LEFT_BEHIND_AFTER_MS (a job that failed, or a worker that stopped before it listed).
 * Replicas share the work: each statement skips slices another worker is listing. A failure (Postgres
 * away) is logged and left to the next catch-up: the slices stay until listed.
 */
export class DeferredSliceLister {
  /** By job id: the jobs whose slices are to be listed. */
  private readonly pending = new Map<string, JobKey>();
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: Pick<WorkerDeps, 'db' | 'logger'>) {}

  start(): void {
    this.timer = setInterval(() => void this.catchUp(), CATCH_UP_EVERY_MS);
    this.timer.unref();
  }

  /** Lists this job's slices soon (in the background). */
  list(job: JobKey): void {
    if (this.stopped) return;
    this.pending.set(job.jobId, job);
    this.kick();
  }

  /** Stops looking; waits for the statement in flight. Slices not yet listed are left to another worker. */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.pending.clear();
    await this.running;
  }

  private async catchUp(): Promise<void> {
    try {
      const jobs = await jobsWithOldDeferredSlices(this.deps.db, LEFT_BEHIND_AFTER_MS);
      for (const job of jobs) this.list(job);
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'could not look for deferred slices');
    }
  }

  private kick(): void {
    if (this.running) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.pending.size > 0 && !this.stopped) this.kick();
    });
  }

  private async drain(): Promise<void> {
    for (const [jobId, job] of this.pending) {
      this.pending.delete(jobId);
      if (this.stopped) return;
      try {
        await listDeferredSlices(this.deps.db, job, { skipLocked: true });
      } catch (error) {
        this.deps.logger.warn({ err: error, jobId }, 'could not list deferred slices; left for the next catch-up');
      }
    }
  }
}
