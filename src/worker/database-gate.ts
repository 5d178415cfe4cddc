import type { Worker } from 'bullmq';
import { sql } from 'kysely';
import type { Db } from '../shared/db/client.js';
import { withDeadline } from '../shared/process/deadline.js';
import type { Logger } from '../shared/telemetry/logger.js';

/** How often a paused worker asks whether Postgres answers again, and how long one such probe waits. */
interface DatabaseProbe {
  /** DB_PROBE_INTERVAL_MS: the workers resume within about this long of the first answer. */
  intervalMs: number;
  /** DB_PROBE_TIMEOUT_MS. */
  timeoutMs: number;
}

/**
 * Stops a worker process from taking jobs while Postgres does not answer, and lets it take them again
 * as soon as it does.
 *
 * Why: without it, every job taken during an outage fails its statement at once, and BullMQ retries
 * it after a backoff that grows with each attempt; a long outage then either uses up the attempts (the
 * job fails for good, an accepted cancel is lost) or leaves jobs waiting minutes after the database is
 * back. Here the first "database unavailable" error pauses the process's workers (jobs already
 * running put themselves back, see workers.ts), a probe runs every DB_PROBE_INTERVAL_MS (a second by
 * default), and the workers resume within about that long of the first answer. Each worker process has
 * its own gate: pausing is local.
 */
export class DatabaseGate {
  private workers: readonly Worker[] = [];
  private probing: NodeJS.Timeout | null = null;
  private resumeListeners: Array<() => void> = [];
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly probeSettings: DatabaseProbe,
  ) {}

  watch(workers: readonly Worker[]): void {
    this.workers = workers;
  }

  get open(): boolean {
    return this.probing === null;
  }

  /** Called after something learnt that Postgres is away; cheap to call again and again. */
  reportUnavailable(error: unknown): void {
    if (this.probing || this.closed) return;
    this.logger.error({ err: error }, 'postgres unavailable: pausing workers until it answers');
    for (const worker of this.workers) void worker.pause(true).catch(() => {});
    this.probing = setInterval(() => void this.probe(), this.probeSettings.intervalMs);
  }

  /** Runs after each recovery (for example to flush audit rows that could not be written). */
  onResume(listener: () => void): void {
    this.resumeListeners.push(listener);
  }

  close(): void {
    this.closed = true;
    if (this.probing) clearInterval(this.probing);
    this.probing = null;
  }

  private async probe(): Promise<void> {
    try {
      await withDeadline(sql`SELECT 1`.execute(this.db), this.probeSettings.timeoutMs, () => {
        throw new Error('probe timed out');
      });
    } catch {
      return;
    }
    if (!this.probing) return;
    clearInterval(this.probing);
    this.probing = null;
    if (this.closed) return;
    this.logger.info('postgres answers again: resuming workers');
    for (const worker of this.workers) worker.resume();
    for (const listener of this.resumeListeners) listener();
  }
}
