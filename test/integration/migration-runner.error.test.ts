import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  MigrationFailedError,
  MigrationLockTimeoutError,
  type MigrationModule,
  runMigrations,
} from '../../src/shared/db/migration-runner.js';
import { migrations as projectMigrations } from '../../src/shared/db/migrator.js';
import { holdReaderLock } from '../helpers/row-locks.js';
import { useTestContext } from '../helpers/test-context.js';

/** The project's own migrations, with the default partition count. */
const migrations = projectMigrations({});

/**
 * What the migration runner does when a migration cannot be applied: a lock held for longer than
 * every retry gives up with a clear error, a failing migration is rolled back whole and not retried,
 * and the migrations before it in the same run stay applied.
 */

const { env } = useTestContext();

async function applied(name: string): Promise<boolean> {
  const result = await sql`SELECT 1 FROM kysely_migration WHERE name = ${name}`.execute(env.db);
  return result.rows.length === 1;
}

async function tableExists(table: string): Promise<boolean> {
  const result = await sql<{ found: boolean }>`SELECT to_regclass(${table}) IS NOT NULL AS found`.execute(env.db);
  return result.rows[0]?.found ?? false;
}

const createTable = (table: string): MigrationModule => ({
  async up(db) {
    await sql`CREATE TABLE ${sql.id(table)} (id int)`.execute(db);
  },
});

describe('migration runner, failures', () => {
  it('gives up with MigrationLockTimeoutError when the lock stays held through every retry', async () => {
    await sql`CREATE TABLE held_probe (id int)`.execute(env.db);
    const reader = await holdReaderLock(env.databaseUrl, 'held_probe');
    let attempts = 0;
    const alter: MigrationModule = {
      async up(db) {
        attempts++;
        await sql`CREATE TABLE alter_side_effect_${sql.raw(String(attempts))} (id int)`.execute(db);
        await sql`ALTER TABLE held_probe ADD COLUMN note text`.execute(db);
      },
    };
    try {
      const run = runMigrations(
        env.db,
        { ...migrations, '2099-02-01T0000-before': createTable('before_probe'), '2099-02-01T0100-alter': alter },
        { lockTimeoutMs: 100, lockRetries: 2, retryDelayMs: () => 50 },
      );
      const error = await run.then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(MigrationLockTimeoutError);
      expect(error).toMatchObject({ migration: '2099-02-01T0100-alter', attempts: 3, lockTimeoutMs: 100 });
      expect((error as Error).message).toMatch(
        /2099-02-01T0100-alter gave up: its locks were not granted within 100 ms/,
      );
      expect((error as Error).message).toMatch(/MIGRATION_LOCK_TIMEOUT_MS/);
      expect((error as Error & { cause: { code: string } }).cause.code).toBe('55P03');
    } finally {
      await reader.release();
    }
    expect(attempts).toBe(3);
    // Each attempt was rolled back whole; the migration before it stays applied.
    for (const attempt of [1, 2, 3]) expect(await tableExists(`alter_side_effect_${attempt}`)).toBe(false);
    expect(await applied('2099-02-01T0100-alter')).toBe(false);
    expect(await applied('2099-02-01T0000-before')).toBe(true);
    expect(await tableExists('before_probe')).toBe(true);
    const column =
      await sql`SELECT 1 FROM information_schema.columns WHERE table_name = 'held_probe' AND column_name = 'note'`.execute(
        env.db,
      );
    expect(column.rows).toHaveLength(0);
  });

  it('rolls back a failing migration whole, does not retry it, and names it', async () => {
    let attempts = 0;
    const broken: MigrationModule = {
      async up(db) {
        attempts++;
        await sql`CREATE TABLE broken_probe (id int)`.execute(db);
        await sql`SELECT no_such_column FROM broken_probe`.execute(db);
      },
    };
    const run = runMigrations(env.db, {
      ...migrations,
      '2099-02-01T0000-before': createTable('before_probe'),
      '2099-03-01T0000-broken': broken,
    });
    await expect(run).rejects.toBeInstanceOf(MigrationFailedError);
    await expect(run).rejects.toThrow(
      /migration 2099-03-01T0000-broken failed: column "no_such_column" does not exist/,
    );
    expect(attempts).toBe(1);
    expect(await tableExists('broken_probe')).toBe(false);
    expect(await applied('2099-03-01T0000-broken')).toBe(false);
  });

  it('refuses a database that applied a migration this code does not have', async () => {
    await expect(runMigrations(env.db, migrations)).rejects.toThrow(
      /the database has applied migrations this code does not have: 2099-02-01T0000-before/,
    );
  });

  it('refuses a new migration that sorts before one already applied', async () => {
    await expect(
      runMigrations(env.db, {
        ...migrations,
        '2099-02-01T0000-before': createTable('before_probe'),
        '2099-01-15T0000-late': createTable('late_probe'),
      }),
    ).rejects.toThrow(/migrations 2099-01-15T0000-late sort before 2099-02-01T0000-before, which is already applied/);
    expect(await tableExists('late_probe')).toBe(false);
  });
});
