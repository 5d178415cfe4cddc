import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  appendNewMigrations,
  type LockedMigration,
  lockProblems,
  type MigrationsLock,
  readMigrationFiles,
} from '../../src/tools/migration-lint/migrations-lock.js';

const MIGRATIONS = fileURLToPath(new URL('../../src/shared/db/migrations/', import.meta.url));
const LOCK = fileURLToPath(new URL('../../src/shared/db/migrations.lock.json', import.meta.url));

describe('the committed migrations', () => {
  it('are exactly the locked ones, unchanged, plus none unlisted', () => {
    const lock = JSON.parse(readFileSync(LOCK, 'utf8')) as MigrationsLock;
    const problems = lockProblems(lock, readMigrationFiles(MIGRATIONS)).map((problem) => problem.message);
    // On failure the messages say what to do: restore an edited migration, or append a new one.
    expect(problems).toEqual([]);
    expect(lock.migrations.length).toBeGreaterThan(0);
  });

  it('start at the one baseline that replaced the migrations of 2026-11-20 to 2026-11-24', () => {
    const lock = JSON.parse(readFileSync(LOCK, 'utf8')) as MigrationsLock;
    expect(lock.migrations[0]?.name).toBe('2026-11-25T0000-baseline');
    expect(readMigrationFiles(MIGRATIONS).every((file) => file.name >= '2026-11-25T0000-baseline')).toBe(true);
  });
});

const initial: LockedMigration = { name: '2026-11-20T0000-initial', sha256: 'a'.repeat(64) };
const layout: LockedMigration = { name: '2026-11-21T0000-layout', sha256: 'b'.repeat(64) };
const lock: MigrationsLock = { migrations: [initial, layout] };

describe('lockProblems', () => {
  it('finds nothing when the folder matches the lock', () => {
    expect(lockProblems(lock, [initial, layout])).toEqual([]);
  });

  it('refuses an edited migration', () => {
    const problems = lockProblems(lock, [initial, { ...layout, sha256: 'c'.repeat(64) }]);
    expect(problems).toEqual([{ kind: 'edited', message: expect.stringContaining('2026-11-21T0000-layout') }]);
    expect(problems[0]?.message).toMatch(/append-only/);
  });

  it('refuses a removed migration', () => {
    expect(lockProblems(lock, [initial])).toEqual([
      { kind: 'removed', message: expect.stringContaining('2026-11-21T0000-layout') },
    ]);
  });

  it('refuses a renamed migration: the old name is gone and the new one is out of order', () => {
    const renamed = { ...initial, name: '2026-11-20T0000-first' };
    const kinds = lockProblems(lock, [renamed, layout]).map((problem) => problem.kind);
    expect(kinds).toEqual(['removed', 'out-of-order']);
  });

  it('asks for a new migration to be appended, naming the command', () => {
    const quotas = { name: '2026-11-22T0000-merchant-quotas', sha256: 'd'.repeat(64) };
    const problems = lockProblems(lock, [initial, layout, quotas]);
    expect(problems).toEqual([{ kind: 'unlisted', message: expect.stringContaining('npm run migrations:lock') }]);
    expect(problems[0]?.message).toContain('2026-11-22T0000-merchant-quotas');
  });

  it('refuses a new migration that would run before a locked one', () => {
    const early = { name: '2026-11-20T1200-sneaky', sha256: 'e'.repeat(64) };
    expect(lockProblems(lock, [initial, early, layout]).map((problem) => problem.kind)).toEqual(['out-of-order']);
  });
});

describe('appendNewMigrations', () => {
  it('appends new migrations in name order and keeps every locked entry as it was', () => {
    const second = { name: '2026-11-23T0000-b', sha256: '2'.repeat(64) };
    const first = { name: '2026-11-22T0000-a', sha256: '1'.repeat(64) };
    expect(appendNewMigrations(lock, [initial, layout, first, second])).toEqual({
      migrations: [initial, layout, first, second],
    });
  });

  it('starts a lock from nothing', () => {
    expect(appendNewMigrations({ migrations: [] }, [initial, layout])).toEqual(lock);
  });

  it('will not lock over an edited migration', () => {
    expect(() => appendNewMigrations(lock, [initial, { ...layout, sha256: 'f'.repeat(64) }])).toThrow(/edited/);
  });
});

describe('readMigrationFiles', () => {
  let directory: string | undefined;
  afterEach(() => {
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  it('hashes each migration file by content and orders them by name', () => {
    directory = mkdtempSync(join(tmpdir(), 'migrations-lock-'));
    writeFileSync(join(directory, '2026-11-21T0000-b.ts'), 'export const b = 1;\n');
    writeFileSync(join(directory, '2026-11-20T0000-a.ts'), 'export const a = 1;\n');
    writeFileSync(join(directory, '2026-11-20T0000-a.d.ts'), 'declare const a: number;\n');
    writeFileSync(join(directory, 'README.md'), 'not a migration\n');
    const files = readMigrationFiles(directory);
    expect(files.map((file) => file.name)).toEqual(['2026-11-20T0000-a', '2026-11-21T0000-b']);
    expect(files[0]?.sha256).toBe(createHash('sha256').update('export const a = 1;\n').digest('hex'));

    writeFileSync(join(directory, '2026-11-20T0000-a.ts'), 'export const a = 2;\n');
    expect(readMigrationFiles(directory)[0]?.sha256).not.toBe(files[0]?.sha256);
  });
});
