import { type Kysely, sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { type MigrationEvent, type MigrationModule, runMigrations } from '../../src/shared/db/migration-runner.js';
import { migrations as projectMigrations } from '../../src/shared/db/migrator.js';
import { holdReaderLock } from '../helpers/row-locks.js';
import { useTestContext } from '../helpers/test-context.js';

/** The project's own migrations, with the default partition count. */
const migrations = projectMigrations({});

/**
 * The migration runner (src/shared/db/migration-runner.ts) on a database of the project's migrations:
 * each migration in a transaction of its own, `transaction = false` in none, every statement under
 * `lock_timeout`, and a migration whose lock is not granted in time rolled back and tried again.
 */

const { env } = useTestContext();

beforeAll(async () => {
  await sql`CREATE TABLE runner_probe (migration text PRIMARY KEY, txid bigint, lock_timeout text)`.execute(env.db);
});

/** Records, from inside a migration, its transaction id and its lock_timeout. */
function probe(name: string): MigrationModule {
  return {
    async up(db: Kysely<any>) {
      // pg_current_xact_id_if_assigned() stays null until a write; the insert assigns one, so read it after.
      await sql`INSERT INTO runner_probe (migration) VALUES (${name})`.execute(db);
      await sql`
        UPDATE runner_probe SET
          txid = pg_current_xact_id()::text::bigint,
          lock_timeout = current_setting('lock_timeout')
        WHERE migration = ${name}
      `.execute(db);
    },
  };
}

async function appliedNames(): Promise<string[]> {
  const result = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(env.db);
  return result.rows.map((row) => row.name);
}

describe('migration runner', () => {
  it('finds nothing to do on a database that has every project migration', async () => {
    expect(await runMigrations(env.db, migrations)).toEqual([]);
  });

  it('runs each migration in a transaction of its own, under lock_timeout, and records it', async () => {
    const applied = await runMigrations(
      env.db,
      { ...migrations, '2099-01-01T0000-probe-a': probe('a'), '2099-01-01T0100-probe-b': probe('b') },
      { lockTimeoutMs: 321 },
    );
    expect(applied).toEqual(['2099-01-01T0000-probe-a', '2099-01-01T0100-probe-b']);
    const rows = (
      await sql<{ migration: string; txid: string; lock_timeout: string }>`
        SELECT migration, txid, lock_timeout FROM runner_probe WHERE migration IN ('a', 'b') ORDER BY migration
      `.execute(env.db)
    ).rows;
    expect(rows.map((row) => row.lock_timeout)).toEqual(['321ms', '321ms']);
    expect(rows[0]?.txid).not.toEqual(rows[1]?.txid);
    expect(await appliedNames()).toEqual(expect.arrayContaining(applied));
    // lock_timeout was set for the migrations only: the session goes back to the pool as it came.
    const after = await sql<{ lock_timeout: string }>`SELECT current_setting('lock_timeout') AS lock_timeout`.execute(
      env.db,
    );
    expect(after.rows[0]?.lock_timeout).toBe('0');
  });

  it('runs a transaction=false migration outside a transaction: CREATE INDEX CONCURRENTLY succeeds', async () => {
    await sql`CREATE TABLE concurrent_probe (id int)`.execute(env.db);
    const index: MigrationModule = {
      transaction: false,
      async up(db) {
        await sql`CREATE INDEX CONCURRENTLY concurrent_probe_id_idx ON concurrent_probe (id)`.execute(db);
        await sql`INSERT INTO runner_probe (migration, lock_timeout) VALUES ('c', current_setting('lock_timeout'))`.execute(
          db,
        );
      },
    };
    const before = await appliedNames();
    const applied = await runMigrations(env.db, {
      ...Object.fromEntries(before.map((name) => [name, probe(name)])),
      '2099-01-01T0200-concurrent-index': index,
    });
    expect(applied).toEqual(['2099-01-01T0200-concurrent-index']);
    const valid = await sql<{ indisvalid: boolean }>`
      SELECT indisvalid FROM pg_index WHERE indexrelid = 'concurrent_probe_id_idx'::regclass
    `.execute(env.db);
    expect(valid.rows).toEqual([{ indisvalid: true }]);
    const probeRow = await sql<{
      lock_timeout: string;
    }>`SELECT lock_timeout FROM runner_probe WHERE migration = 'c'`.execute(env.db);
    expect(probeRow.rows).toEqual([{ lock_timeout: '500ms' }]);
  });

  it('retries a migration whose lock is not granted in time, and applies it once the lock is free', async () => {
    await sql`CREATE TABLE retry_probe (id int)`.execute(env.db);
    const reader = await holdReaderLock(env.databaseUrl, 'retry_probe');
    const events: MigrationEvent[] = [];
    const addColumn: MigrationModule = {
      async up(db) {
        await sql`ALTER TABLE retry_probe ADD COLUMN note text`.execute(db);
      },
    };
    const before = await appliedNames();
    const started = Date.now();
    const releasing = new Promise<void>((resolve) =>
      setTimeout(() => {
        void reader.release().then(resolve);
      }, 1_000),
    );
    const applied = await runMigrations(
      env.db,
      { ...Object.fromEntries(before.map((name) => [name, probe(name)])), '2099-01-01T0300-add-column': addColumn },
      { lockTimeoutMs: 150, lockRetries: 20, retryDelayMs: () => 100, onEvent: (event) => events.push(event) },
    );
    await releasing;
    expect(applied).toEqual(['2099-01-01T0300-add-column']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    const timeouts = events.filter((event) => event.kind === 'lock-timeout');
    expect(timeouts.length).toBeGreaterThanOrEqual(2);
    expect(events.at(-1)).toMatchObject({
      kind: 'applied',
      migration: '2099-01-01T0300-add-column',
      attempts: timeouts.length + 1,
    });
    const column =
      await sql`SELECT 1 FROM information_schema.columns WHERE table_name = 'retry_probe' AND column_name = 'note'`.execute(
        env.db,
      );
    expect(column.rows).toHaveLength(1);
  });
});
