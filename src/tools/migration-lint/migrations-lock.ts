import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';

/**
 * Migrations are append-only: once one is committed it may have run on a database somewhere, and
 * editing, renaming or removing it would leave that database different from a fresh one. The lock
 * lists every committed migration with a sha256 of its file, in the order they run; a unit test
 * compares it with the folder, and `npm run migrations:lock` appends new migrations to it (and
 * never rewrites an entry).
 *
 * The lock was started afresh once, before the first release, when the migrations of 2026-11-20 to
 * 2026-11-24 were replaced by one baseline (2026-11-25T0000-baseline). Never again: from
 * then on a database somewhere may have run any committed migration.
 */

export interface LockedMigration {
  name: string;
  sha256: string;
}

export interface MigrationsLock {
  migrations: LockedMigration[];
}

const MIGRATIONS_LOCK_COMMAND = 'npm run migrations:lock';

/** The migration files of a folder, by name (file name without extension), in the order they run. */
export function readMigrationFiles(directory: string): LockedMigration[] {
  return readdirSync(directory)
    .filter((file) => /\.(ts|js)$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => ({
      name: basename(file, extname(file)),
      sha256: createHash('sha256')
        .update(readFileSync(join(directory, file)))
        .digest('hex'),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export interface LockProblem {
  /** `unlisted` is the one `npm run migrations:lock` fixes; the others are fixed by hand. */
  kind: 'removed' | 'edited' | 'out-of-order' | 'unlisted';
  message: string;
}

/**
 * What is wrong between the lock and the folder: a locked migration that is gone or changed, a
 * migration the lock does not list, or one that would run before a migration already locked.
 * Empty when they agree.
 */
export function lockProblems(lock: MigrationsLock, files: readonly LockedMigration[]): LockProblem[] {
  const problems: LockProblem[] = [];
  const byName = new Map(files.map((file) => [file.name, file]));
  const locked = new Set(lock.migrations.map((entry) => entry.name));
  for (const entry of lock.migrations) {
    const file = byName.get(entry.name);
    if (!file) {
      problems.push({
        kind: 'removed',
        message:
          `migration ${entry.name} is in the lock but its file is gone (renamed or removed): migrations are ` +
          'append-only; restore it and add a new migration for the change',
      });
    } else if (file.sha256 !== entry.sha256) {
      problems.push({
        kind: 'edited',
        message:
          `migration ${entry.name} was edited after it was locked: migrations are append-only; restore it ` +
          'and add a new migration for the change',
      });
    }
  }
  const last = lock.migrations.at(-1)?.name;
  for (const file of files) {
    if (locked.has(file.name)) continue;
    if (last !== undefined && file.name < last) {
      problems.push({
        kind: 'out-of-order',
        message:
          `new migration ${file.name} sorts before ${last}, which is already locked: name it with a later ` +
          'date so that it runs after every existing migration',
      });
    } else {
      problems.push({
        kind: 'unlisted',
        message:
          `new migration ${file.name} is not in the lock: run \`${MIGRATIONS_LOCK_COMMAND}\` to append it ` +
          '(new migrations are appended; existing entries never change)',
      });
    }
  }
  return problems;
}

/**
 * The lock with the folder's new migrations appended. Throws when a locked migration was changed
 * or removed, or a new one sorts before the last locked one: those are fixed by hand, not locked.
 */
export function appendNewMigrations(lock: MigrationsLock, files: readonly LockedMigration[]): MigrationsLock {
  const locked = new Set(lock.migrations.map((entry) => entry.name));
  const fresh = files.filter((file) => !locked.has(file.name));
  const blocking = lockProblems(lock, files).filter((problem) => problem.kind !== 'unlisted');
  if (blocking.length > 0) throw new Error(blocking.map((problem) => problem.message).join('\n'));
  return { migrations: [...lock.migrations, ...fresh] };
}
