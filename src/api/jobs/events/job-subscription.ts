import type { JobStatus } from '../../../shared/jobs/job-status-schema.js';

/**
 * One stream's view of a watched job (job-event-hub.ts): the job's latest status, replaced by each read
 * (latest wins: a stream whose client reads slowly holds one status, never a backlog), and a way to wait
 * for the next one.
 */
export class JobSubscription {
  private latest: JobStatus;
  private changes = 0;
  private closedByServer = false;
  private ended = false;
  private wake: (() => void) | null = null;

  constructor(
    initial: JobStatus,
    /** The least time between two progress events of this stream. */
    readonly progressIntervalMs: number,
    private readonly onEnd: () => void,
  ) {
    this.latest = initial;
  }

  get status(): JobStatus {
    return this.latest;
  }

  /** Counts the updates: a stream remembers the count it has seen and waits for a higher one. */
  get version(): number {
    return this.changes;
  }

  /** The process is closing: the stream sends nothing more. */
  get closed(): boolean {
    return this.closedByServer;
  }

  update(status: JobStatus): void {
    this.latest = status;
    this.changes++;
    this.notify();
  }

  close(): void {
    this.closedByServer = true;
    this.notify();
  }

  /** Resolves when the status changes past `seen`, the server closes, or after `ms`. One waiter: the stream. */
  waitForChange(seen: number, ms: number): Promise<void> {
    if (this.changes !== seen || this.closedByServer) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** The stream is over (ended, or its client went away): the hub forgets it. Once. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.close();
    this.onEnd();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
