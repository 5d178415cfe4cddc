import type { Db } from '../../shared/db/client.js';
import { type JobOutcome, recordJobsFinished } from '../../shared/jobs/cancellation-jobs.repository.js';
import type { RedisConnection } from '../../shared/redis/redis.js';
import { auditOutboxKey } from '../../shared/redis/redis-keys.js';
import type { Logger } from '../../shared/telemetry/logger.js';

/** Rows moved to Postgres per flush. */
const FLUSH_BATCH = 500;

/**
 * Audit rows (a job's final outcome) that could not be written because Postgres was away, kept in
 * Redis until it is back.
 *
 * Why: once BullMQ forgets a failed job, its audit row is the only record of it; losing the row to an
 * outage would turn the job's status into "not found". Redis is the durable place the worker still has
 * (AOF). A hash keyed by job id: adding the same row twice keeps one, and several workers may flush
 * at once — the rows are upserts, each field is deleted only after its row is written, so a crash
 * mid-flush writes a row twice at worst, never loses one.
 */
export class AuditOutbox {
  private readonly key: string;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly redis: RedisConnection,
    private readonly db: Db,
    private readonly logger: Logger,
    prefix: string,
    /** AUDIT_OUTBOX_FLUSH_INTERVAL_MS. */
    private readonly flushIntervalMs: number,
  ) {
    this.key = auditOutboxKey(prefix);
  }

  /** Writes the rows now, or keeps them for later when Postgres cannot take them. */
  async record(rows: readonly JobOutcome[]): Promise<void> {
    try {
      await recordJobsFinished(this.db, rows);
    } catch (error) {
      this.logger.warn(
        { err: error, jobs: rows.map((row) => row.id) },
        'audit rows kept in redis until postgres is back',
      );
      await this.redis.hset(this.key, Object.fromEntries(rows.map((row) => [row.id, JSON.stringify(row)])));
    }
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.flushIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Moves kept rows to Postgres; a failure leaves them for the next try. */
  flush(): Promise<void> {
    this.flushing ??= this.flushOnce().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    try {
      let cursor = '0';
      do {
        const [next, flat] = await this.redis.hscan(this.key, cursor, 'COUNT', FLUSH_BATCH);
        cursor = next;
        if (flat.length === 0) continue;
        const ids: string[] = [];
        const rows: JobOutcome[] = [];
        for (let index = 0; index < flat.length; index += 2) {
          ids.push(flat[index] as string);
          rows.push(revive(JSON.parse(flat[index + 1] as string)));
        }
        await recordJobsFinished(this.db, rows);
        await this.redis.hdel(this.key, ...ids);
        this.logger.info({ jobs: ids.length }, 'kept audit rows written to postgres');
      } while (cursor !== '0');
    } catch (error) {
      this.logger.debug({ err: error }, 'audit rows still kept: postgres or redis unavailable');
    }
  }
}

/** Dates went through JSON as strings. */
function revive(row: JobOutcome): JobOutcome {
  return {
    ...row,
    createdAt: new Date(row.createdAt),
    startedAt: new Date(row.startedAt),
    finishedAt: new Date(row.finishedAt),
  };
}
