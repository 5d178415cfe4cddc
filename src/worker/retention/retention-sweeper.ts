import { performance } from 'node:perf_hooks';
import { type Kysely, sql } from 'kysely';
import type { Config } from '../../shared/config/config.js';
import type { Db, Executor } from '../../shared/db/client.js';
import type { Database } from '../../shared/db/schema.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { Metrics } from '../../shared/telemetry/metrics.js';
import {
  deleteAdminAuditEntries,
  deleteBetSlipItemsOf,
  deleteJobRowsOf,
  deleteJobs,
  deleteSessions,
  deleteWebhookDeliveries,
  expiredJobs,
  expiredSessionIds,
  perJobTables,
  type RetentionTable,
  retentionTables,
} from './retention.repository.js';

/**
 * Removes what has outlived RETENTION_MS from the service's own records (docs/design.md §13), in
 * statements of at most RETENTION_BATCH_SIZE rows, each its own short transaction.
 *
 * One sweeper at a time across all worker replicas: a sweep first takes a Postgres session-level
 * advisory lock (`pg_try_advisory_lock`) on a connection it keeps for the whole sweep and runs its
 * statements on. A replica that finds the lock taken skips its turn. Postgres releases the lock when
 * that session ends, so a worker killed mid-sweep frees it at once (no expiry to tune, unlike a Redis
 * lock key), and a sweeper whose connection is lost cannot go on deleting without it.
 */

/** The advisory lock of the sweep: one number in the service's database (0x72746e2d737770, `rtn-swp` in ASCII). */
export const RETENTION_LOCK_KEY = '32216163902781296';

/**
 * How long one delete waits for a lock before it gives up (the sweep fails and runs again at the next
 * turn). Short, so that the sweeper never queues in front of others behind a lock held elsewhere.
 */
const LOCK_TIMEOUT = '1s';

/** The longest wait between two sweeps when RETENTION_SWEEP_INTERVAL_MS is unset: a sweep's backlog stays small. */
const HOUR_MS = 60 * 60 * 1000;
/** A worker's first sweep comes within a minute of its start (jittered), so a restart shows progress soon. */
const FIRST_SWEEP_MAX_DELAY_MS = 60_000;

export type SweepReport =
  | { outcome: 'skipped' }
  | {
      /** `stopped`: the worker began shutting down mid-sweep; the rest waits for the next sweep. */
      outcome: 'completed' | 'stopped';
      deleted: Record<RetentionTable, number>;
      /** The longest of the sweep's transactions: how long it held any lock. */
      longestStatementMs: number;
    };

export interface RetentionSweeperDeps {
  config: Config;
  db: Db;
  logger: Logger;
  metrics: Metrics;
  /** The worker's stop signal: no statement starts after it. */
  stopping: AbortSignal;
}

/** RETENTION_SWEEP_INTERVAL_MS, or a tenth of the retention, at most an hour. */
function sweepIntervalMs(config: Config): number {
  return config.RETENTION_SWEEP_INTERVAL_MS ?? Math.min(Math.floor(config.RETENTION_MS / 10), HOUR_MS);
}

class SweepStopped extends Error {}

export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<unknown> | undefined;
  private halted = false;

  constructor(private readonly deps: RetentionSweeperDeps) {
    deps.stopping.addEventListener('abort', () => this.halt(), { once: true });
  }

  /** Sweeps now and then (jittered, so that replicas started together do not all try at once). */
  start(): void {
    this.schedule(Math.random() * Math.min(sweepIntervalMs(this.deps.config), FIRST_SWEEP_MAX_DELAY_MS));
  }

  /** No sweep starts any more; the one in flight ends after its current statement. */
  async stop(): Promise<void> {
    this.halt();
    await this.current;
  }

  /** One sweep, unless another replica is sweeping. Throws what made it fail (after counting it). */
  async sweep(now = Date.now()): Promise<SweepReport> {
    const { db, metrics, logger } = this.deps;
    const started = performance.now();
    try {
      const report = await db.connection().execute(async (connection) => {
        const locked = await sql<{ locked: boolean }>`
          SELECT pg_try_advisory_lock(${RETENTION_LOCK_KEY}::bigint) AS locked
        `.execute(connection);
        if (!locked.rows[0]?.locked) return { outcome: 'skipped' } as const;
        try {
          return await this.run(connection, now);
        } finally {
          await sql`SELECT pg_advisory_unlock(${RETENTION_LOCK_KEY}::bigint)`
            .execute(connection)
            // A lost connection has released the lock with its session.
            .catch((error: unknown) => logger.warn({ err: error }, 'retention: could not release the sweep lock'));
        }
      });
      metrics.retentionSweeps.inc({ outcome: report.outcome });
      if (report.outcome === 'completed') {
        metrics.retentionLastSweep.setToCurrentTime();
        metrics.retentionSweepDuration.observe((performance.now() - started) / 1000);
      }
      if (report.outcome !== 'skipped') {
        const removed = Object.values(report.deleted).reduce((sum, count) => sum + count, 0);
        logger[removed > 0 ? 'info' : 'debug'](
          { outcome: report.outcome, deleted: report.deleted, ms: Math.round(performance.now() - started) },
          'retention sweep',
        );
      }
      return report;
    } catch (error) {
      metrics.retentionSweeps.inc({ outcome: 'failed' });
      throw error;
    }
  }

  private async run(connection: Kysely<Database>, now: number): Promise<SweepReport> {
    const { config, metrics } = this.deps;
    const cutoff = new Date(now - config.RETENTION_MS);
    // A pending delivery goes once older than both: it has lost its delivery job (RETENTION_ABANDONED_DELIVERY_MS).
    const abandonedBefore = new Date(Math.min(cutoff.getTime(), now - config.RETENTION_ABANDONED_DELIVERY_MS));
    const limit = config.RETENTION_BATCH_SIZE;
    const deleted = Object.fromEntries(retentionTables.map((table) => [table, 0])) as Record<RetentionTable, number>;
    let longestStatementMs = 0;

    /** One bounded statement in a transaction of its own, with a short lock timeout. */
    const step = async (table: RetentionTable, statement: (trx: Executor) => Promise<number>): Promise<number> => {
      this.throwIfStopping();
      const began = performance.now();
      const count = await connection.transaction().execute(async (trx) => {
        await sql.raw(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`).execute(trx);
        return statement(trx);
      });
      const ms = performance.now() - began;
      longestStatementMs = Math.max(longestStatementMs, ms);
      metrics.retentionStatementDuration.observe({ table }, ms / 1000);
      metrics.retentionDeleted.inc({ table }, count);
      deleted[table] += count;
      return count;
    };
    /** The statement again until a batch comes back short. */
    const drain = async (table: RetentionTable, statement: (trx: Executor) => Promise<number>) => {
      let count = limit;
      while (count >= limit) count = await step(table, statement);
    };

    try {
      // Finished jobs, a batch at a time: first what hangs off them, then their audit rows, so that
      // nothing is ever left without its job (and a job's rows never outlive the sweep that found it).
      for (;;) {
        this.throwIfStopping();
        const jobs = await expiredJobs(connection, cutoff, limit);
        if (jobs.length === 0) break;
        for (const table of perJobTables) await drain(table, (trx) => deleteJobRowsOf(trx, table, jobs, limit));
        await step('cancellation_jobs', (trx) => deleteJobs(trx, jobs, cutoff));
        if (jobs.length < limit) break;
      }

      await drain('webhook_deliveries', (trx) => deleteWebhookDeliveries(trx, cutoff, abandonedBefore, limit));
      await drain('admin_audit_log', (trx) => deleteAdminAuditEntries(trx, cutoff, limit));

      // Sessions expired longer ago than the retention, their bet slip items first.
      for (;;) {
        this.throwIfStopping();
        const sessionIds = await expiredSessionIds(connection, cutoff, limit);
        if (sessionIds.length === 0) break;
        await drain('bet_slip_items', (trx) => deleteBetSlipItemsOf(trx, sessionIds, limit));
        await step('sessions', (trx) => deleteSessions(trx, sessionIds, cutoff));
        if (sessionIds.length < limit) break;
      }
      if (config.RETENTION_VACUUM) {
        // The deleted rows' space becomes reusable now: insert-only tables that lose a batch every sweep
        // otherwise grow until autovacuum runs (and forever where it is off). Not in a transaction.
        for (const table of retentionTables) {
          this.throwIfStopping();
          if (deleted[table] > 0) await sql.raw(`VACUUM (SKIP_LOCKED) ${table}`).execute(connection);
        }
      }
    } catch (error) {
      if (error instanceof SweepStopped) return { outcome: 'stopped', deleted, longestStatementMs };
      throw error;
    }
    return { outcome: 'completed', deleted, longestStatementMs };
  }

  private throwIfStopping(): void {
    if (this.halted || this.deps.stopping.aborted) throw new SweepStopped();
  }

  private halt(): void {
    this.halted = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    if (this.halted || this.deps.stopping.aborted) return;
    this.timer = setTimeout(() => {
      const sweep = this.sweep().catch((error: unknown) =>
        this.deps.logger.warn({ err: error }, 'retention sweep failed; it runs again at the next turn'),
      );
      this.current = sweep;
      void sweep.finally(() => {
        this.current = undefined;
        // ±20 %: replicas drift apart instead of trying in step.
        this.schedule(sweepIntervalMs(this.deps.config) * (0.8 + Math.random() * 0.4));
      });
    }, delayMs);
    // The timer alone must not keep a worker process alive.
    this.timer.unref();
  }
}
