import { sql } from 'kysely';
import type { Db } from '../../shared/db/client.js';
import { isDatabaseUnavailable, isRecoveryConflict } from '../../shared/db/database-errors.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { Metrics } from '../../shared/telemetry/metrics.js';
import { parseLsn, ReplicaLag } from './replica-lag.js';

/** The reads the router counts, by what asked for them. */
export type ReadKind = 'readAll' | 'dryRun' | 'jobStatus' | 'jobRewards' | 'jobUnapplied' | 'jobReport' | 'merchant';
export type PoolName = 'primary' | 'replica';

export interface ReadRouterOptions {
  /** Most lag at which lag-tolerant reads still go to the replica (READ_MAX_LAG_MS). */
  maxLagMs: number;
  /** How often the lag is measured (READ_LAG_POLL_MS). */
  pollMs: number;
  metrics: Metrics;
  logger: Logger;
}

export interface ReadOptions<T> {
  /**
   * Whether a replica's answer can be used as it is. A replica within its lag may still miss the last
   * second of writes: a read that can tell (a job whose end the replica has not replayed yet) asks the
   * primary again, and keeps the replica's answer only if the primary does not answer.
   */
  accept?: (result: T) => boolean;
}

/** The lag gauge while it cannot be measured (no replica, or one side not answering). */
const UNMEASURED = -1;

/** How long primary positions are kept to date the replica's: far past any lag worth telling apart. */
const LAG_HISTORY_MS = 10 * 60_000;

/**
 * Sends each read to a Postgres pool (docs/design.md, "Read replica"). Built once per API process and
 * passed down; with no replica (DATABASE_READ_URL unset) every read goes to the primary.
 *
 * Lag-tolerant reads (`read`) go to the replica while it answers and its lag is within `maxLagMs`,
 * else to the primary; and to the replica whatever its lag while the primary does not answer, since an
 * answer a little old beats a 503. A read that fails because its pool is unreachable is tried once on
 * the other, and so is a replica read cancelled by a recovery conflict (the standby replaying changes
 * to what the read held). Reads that must see the latest writes (`readPrimaryFirst`) go to the primary, and to the
 * replica only when the primary is down. Writes never come here: they use the primary pool directly.
 *
 * The state comes from a check every `pollMs` (both pools asked, the lag measured by ReplicaLag), so a
 * request never waits on a dead pool's connect timeout once a check has seen it dead.
 */
export class ReadRouter {
  private readonly lag = new ReplicaLag(LAG_HISTORY_MS);
  private primaryUp = true;
  private replicaUp = false;
  private replicaLagMs: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly primary: Db,
    private readonly replica: Db | undefined,
    private readonly options: ReadRouterOptions,
  ) {
    options.metrics.replicaUp.set(0);
    options.metrics.replicaLag.set(UNMEASURED);
  }

  /** Starts the lag checks (none without a replica). Until the first one answers, reads go to the primary. */
  start(): this {
    if (this.replica) void this.poll();
    return this;
  }

  /** Stops the lag checks. The pools are their owner's to close. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.polling;
  }

  /** A read that tolerates the replica's lag. */
  async read<T>(
    kind: ReadKind,
    query: (db: Db, pool: PoolName) => Promise<T>,
    options: ReadOptions<T> = {},
  ): Promise<T> {
    if (this.choose() === 'primary') return this.readPrimaryFirst(kind, query);
    let result: T;
    try {
      result = await this.run('replica', kind, query);
    } catch (error) {
      if (isDatabaseUnavailable(error)) this.sawReplicaDown(error);
      else if (!isRecoveryConflict(error)) throw error;
      return this.run('primary', kind, query);
    }
    if (options.accept === undefined || options.accept(result)) return result;
    try {
      return await this.run('primary', kind, query);
    } catch (error) {
      if (isDatabaseUnavailable(error)) return result;
      throw error;
    }
  }

  /** A read that must see the primary's latest writes; from the replica only while the primary is down. */
  async readPrimaryFirst<T>(kind: ReadKind, query: (db: Db, pool: PoolName) => Promise<T>): Promise<T> {
    if (this.replica && !this.primaryUp && this.replicaUp) return this.run('replica', kind, query);
    try {
      return await this.run('primary', kind, query);
    } catch (error) {
      if (!this.replica || !isDatabaseUnavailable(error)) throw error;
      this.primaryUp = false;
      return this.run('replica', kind, query);
    }
  }

  /** Where a lag-tolerant read goes now. */
  private choose(): PoolName {
    if (!this.replica || !this.replicaUp) return 'primary';
    if (!this.primaryUp) return 'replica';
    return this.replicaLagMs !== undefined && this.replicaLagMs <= this.options.maxLagMs ? 'replica' : 'primary';
  }

  private async run<T>(pool: PoolName, kind: ReadKind, query: (db: Db, pool: PoolName) => Promise<T>): Promise<T> {
    const db = pool === 'replica' ? (this.replica as Db) : this.primary;
    const result = await query(db, pool);
    this.options.metrics.databaseReads.inc({ pool, kind });
    return result;
  }

  private sawReplicaDown(error: unknown): void {
    if (this.replicaUp) this.options.logger.warn({ err: error }, 'read replica unavailable: reads go to the primary');
    this.replicaUp = false;
    this.replicaLagMs = undefined;
    this.options.metrics.replicaUp.set(0);
    this.options.metrics.replicaLag.set(UNMEASURED);
  }

  private poll(): Promise<void> {
    this.polling = this.check()
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'read replica check failed'))
      .finally(() => {
        if (!this.closed) this.timer = setTimeout(() => void this.poll(), this.options.pollMs).unref();
      });
    return this.polling;
  }

  /** Asks the primary first, then the replica: a position the replica has replayed is then not newer than the sample. */
  private async check(): Promise<void> {
    const replica = this.replica as Db;
    const primary = await sql<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`
      .execute(this.primary)
      .then((result) => (result.rows[0] as { lsn: string }).lsn)
      .catch(() => undefined);
    const sampledAt = Date.now();
    if (primary !== undefined) this.lag.recordPrimary(parseLsn(primary), sampledAt);
    if (this.primaryUp !== (primary !== undefined)) {
      this.options.logger.warn(
        primary === undefined ? 'primary unavailable: lag-tolerant reads go to the replica' : 'primary answers again',
      );
    }
    this.primaryUp = primary !== undefined;

    const standby = await sql<{ in_recovery: boolean; replayed: string | null }>`
      SELECT pg_is_in_recovery() AS in_recovery, pg_last_wal_replay_lsn()::text AS replayed`
      .execute(replica)
      .then((result) => result.rows[0])
      .catch((error: unknown) => {
        this.sawReplicaDown(error);
        return undefined;
      });
    if (standby === undefined) return;
    if (!this.replicaUp) this.options.logger.info('read replica answers');
    this.replicaUp = true;
    this.options.metrics.replicaUp.set(1);
    // Not in recovery: promoted (or DATABASE_READ_URL names the primary itself), so nothing to replay.
    if (!standby.in_recovery) this.replicaLagMs = 0;
    else if (primary === undefined || standby.replayed === null) this.replicaLagMs = undefined;
    else this.replicaLagMs = this.lag.lagMs(parseLsn(standby.replayed), Date.now());
    this.options.metrics.replicaLag.set(this.replicaLagMs === undefined ? UNMEASURED : this.replicaLagMs / 1_000);
  }
}
