/**
 * Coalescing of single `cancel` jobs.
 *
 * Why: one transaction per reward is bounded by commit cost (~4.7k rewards/s here); one statement for
 * a few hundred rewards is ~5× faster (measured; docs/scaling.md).
 *
 * How: the worker runs single-cancel jobs with a high concurrency (WORKER_CANCEL_CONCURRENCY). Each
 * job's processor does not touch the database itself: it hands its request to this coalescer and
 * waits. The coalescer applies what has gathered in one transaction when COALESCE_MAX_BATCH requests
 * are waiting or COALESCE_WINDOW_MS after the first one arrived, whichever is first, and then settles
 * every waiting job with its own outcome. A job completes in BullMQ only after the transaction that
 * applied it has committed, so a crash loses nothing: uncommitted jobs are still active in BullMQ,
 * their locks expire, and they run again (the statement is idempotent). A failed transaction fails
 * every job in it, and BullMQ retries each with backoff; `apply` may also fail single requests by
 * returning an Error in their place.
 *
 * Several batches may be in flight at once (the next one gathers while the last one commits).
 */
export class Coalescer<Request, Outcome> {
  private waiting: Array<{ request: Request; resolve: (outcome: Outcome) => void; reject: (error: unknown) => void }> =
    [];
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly apply: (requests: Request[]) => Promise<Array<Outcome | Error>>,
    private readonly maxBatch: number,
    private readonly windowMs: number,
  ) {}

  submit(request: Request): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      if (this.waiting.length >= this.maxBatch) {
        this.flush();
      } else if (!this.timer) {
        this.timer = setTimeout(() => this.flush(), this.windowMs);
      }
    });
  }

  /** Applies whatever is waiting and resolves once every batch in flight has settled. */
  async drain(): Promise<void> {
    this.flush();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      const run = this.apply(batch.map((entry) => entry.request)).then(
        (outcomes) => {
          batch.forEach((entry, index) => {
            const outcome = outcomes[index];
            if (outcome instanceof Error) entry.reject(outcome);
            else entry.resolve(outcome as Outcome);
          });
        },
        (error: unknown) => {
          for (const entry of batch) entry.reject(error);
        },
      );
      const tracked = run.finally(() => this.inFlight.delete(tracked));
      this.inFlight.add(tracked);
    }
  }
}
