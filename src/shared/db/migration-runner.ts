import { type Kysely, sql } from 'kysely';

/**
 * A migration file: `up` (and `down`, kept for reading, never run), and whether it runs in a
 * transaction. `export const transaction = false` runs it outside one, statement by statement: what
 * `CREATE INDEX CONCURRENTLY` and a batched backfill need. Such a file must be safe to run again
 * from its start, because a lock timeout retries it whole.
 */
export interface MigrationModule {
  up(db: Kysely<any>): Promise<void>;
  down?(db: Kysely<any>): Promise<void>;
  transaction?: boolean;
}

export type MigrationEvent =
  | { kind: 'applied'; migration: string; attempts: number; ms: number }
  | { kind: 'lock-timeout'; migration: string; attempt: number; retryInMs: number };

export interface MigrationRunOptions {
  /** `lock_timeout` of every statement a migration runs (default 500 ms). */
  lockTimeoutMs?: number;
  /** How many times a migration whose lock was not granted in time is tried again (default 10). */
  lockRetries?: number;
  /** The wait before retry `attempt` (1-based); default 250 ms doubling up to 8 s, with jitter. */
  retryDelayMs?: (attempt: number) => number;
  onEvent?: (event: MigrationEvent) => void;
}

/** Kysely's own bookkeeping table, so databases migrated by Kysely's Migrator carry on as they are. */
const MIGRATION_TABLE = 'kysely_migration';
/** One migrator at a time per database: replicas starting together wait here and then find nothing to do. */
const ADVISORY_LOCK_KEY = 7_482_951_003;
/** lock_not_available (lock_timeout) and deadlock_detected: the migration's locks were not granted. */
const LOCK_NOT_GRANTED = new Set(['55P03', '40P01']);

export class MigrationLockTimeoutError extends Error {
  constructor(
    readonly migration: string,
    readonly attempts: number,
    readonly lockTimeoutMs: number,
    cause: unknown,
  ) {
    super(
      `migration ${migration} gave up: its locks were not granted within ${lockTimeoutMs} ms on any of ` +
        `${attempts} attempts (another session holds a conflicting lock: a long transaction or query on the ` +
        'tables it alters). Nothing of it was kept but what a transaction=false migration completed; run it ' +
        'again when that session is gone, or raise MIGRATION_LOCK_TIMEOUT_MS / MIGRATION_LOCK_RETRIES',
      { cause },
    );
    this.name = 'MigrationLockTimeoutError';
  }
}

export class MigrationFailedError extends Error {
  constructor(
    readonly migration: string,
    cause: unknown,
  ) {
    super(`migration ${migration} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'MigrationFailedError';
  }
}

/** MIGRATION_LOCK_TIMEOUT_MS and MIGRATION_LOCK_RETRIES' defaults, for a caller without the configuration (tests). */
const DEFAULT_LOCK_TIMEOUT_MS = 500;
const DEFAULT_LOCK_RETRIES = 10;
/**
 * The wait after a migration's first lock timeout, doubled at each next one up to RETRY_MAX_DELAY_MS:
 * the long query in the way usually ends within seconds, and ten retries then wait about a minute in all.
 */
const RETRY_FIRST_DELAY_MS = 250;
const RETRY_MAX_DELAY_MS = 8_000;

function defaultRetryDelayMs(attempt: number): number {
  const base = Math.min(RETRY_FIRST_DELAY_MS * 2 ** (attempt - 1), RETRY_MAX_DELAY_MS);
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

function lockNotGranted(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && LOCK_NOT_GRANTED.has(code);
}

/**
 * Applies the pending migrations in name order, each in a transaction of its own (or none), every
 * statement under `lock_timeout`: an `ALTER TABLE` queued behind a long query would otherwise queue
 * every request behind itself for as long as that query runs. A migration whose lock is not granted in
 * time is rolled back and tried again after a backoff, and given up with `MigrationLockTimeoutError`.
 * Returns the names applied.
 */
export async function runMigrations(
  db: Kysely<any>,
  migrations: Readonly<Record<string, MigrationModule>>,
  options: MigrationRunOptions = {},
): Promise<string[]> {
  const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const lockRetries = options.lockRetries ?? DEFAULT_LOCK_RETRIES;
  const retryDelayMs = options.retryDelayMs ?? defaultRetryDelayMs;
  const onEvent = options.onEvent ?? (() => {});

  // One session for the whole run: it holds the advisory lock, and a transaction=false migration's
  // statements all run on it.
  return db.connection().execute(async (session) => {
    await sql`SELECT pg_advisory_lock(${ADVISORY_LOCK_KEY})`.execute(session);
    try {
      await sql`
        CREATE TABLE IF NOT EXISTS ${sql.id(MIGRATION_TABLE)} (
          name varchar(255) NOT NULL PRIMARY KEY,
          timestamp varchar(255) NOT NULL
        )
      `.execute(session);
      const pending = await pendingMigrations(session, migrations);
      const applied: string[] = [];
      for (const name of pending) {
        const migration = migrations[name] as MigrationModule;
        const started = performance.now();
        const attempts = await applyWithRetries(session, name, migration, {
          lockTimeoutMs,
          lockRetries,
          retryDelayMs,
          onEvent,
        });
        onEvent({ kind: 'applied', migration: name, attempts, ms: Math.round(performance.now() - started) });
        applied.push(name);
      }
      return applied;
    } finally {
      await sql`RESET lock_timeout`.execute(session);
      await sql`SELECT pg_advisory_unlock(${ADVISORY_LOCK_KEY})`.execute(session);
    }
  });
}

async function pendingMigrations(
  session: Kysely<any>,
  migrations: Readonly<Record<string, MigrationModule>>,
): Promise<string[]> {
  const executed = (
    await sql<{ name: string }>`SELECT name FROM ${sql.id(MIGRATION_TABLE)} ORDER BY name`.execute(session)
  ).rows.map((row) => row.name);
  const known = Object.keys(migrations).sort();
  const unknown = executed.filter((name) => !(name in migrations));
  if (unknown.length > 0) {
    throw new Error(`the database has applied migrations this code does not have: ${unknown.join(', ')}`);
  }
  const done = new Set(executed);
  const last = executed.at(-1);
  const pending = known.filter((name) => !done.has(name));
  const early = pending.filter((name) => last !== undefined && name < last);
  if (early.length > 0) {
    throw new Error(`migrations ${early.join(', ')} sort before ${last}, which is already applied`);
  }
  return pending;
}

interface RetryPolicy {
  lockTimeoutMs: number;
  lockRetries: number;
  retryDelayMs: (attempt: number) => number;
  onEvent: (event: MigrationEvent) => void;
}

async function applyWithRetries(
  session: Kysely<any>,
  name: string,
  migration: MigrationModule,
  policy: RetryPolicy,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      await applyOnce(session, name, migration, policy.lockTimeoutMs);
      return attempt;
    } catch (error) {
      if (!lockNotGranted(error)) throw new MigrationFailedError(name, error);
      if (attempt > policy.lockRetries) {
        throw new MigrationLockTimeoutError(name, attempt, policy.lockTimeoutMs, error);
      }
      const retryInMs = policy.retryDelayMs(attempt);
      policy.onEvent({ kind: 'lock-timeout', migration: name, attempt, retryInMs });
      await new Promise((resolve) => setTimeout(resolve, retryInMs));
    }
  }
}

async function applyOnce(session: Kysely<any>, name: string, migration: MigrationModule, lockTimeoutMs: number) {
  const record = sql`INSERT INTO ${sql.id(MIGRATION_TABLE)} (name, timestamp) VALUES (${name}, ${new Date().toISOString()})`;
  const timeout = `${lockTimeoutMs}ms`;
  if (migration.transaction === false) {
    await sql`SELECT set_config('lock_timeout', ${timeout}, false)`.execute(session);
    await migration.up(session);
    await record.execute(session);
    return;
  }
  await session.transaction().execute(async (trx) => {
    await sql`SELECT set_config('lock_timeout', ${timeout}, true)`.execute(trx);
    await migration.up(trx);
    await record.execute(trx);
  });
}
