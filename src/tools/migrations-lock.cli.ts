import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { appendNewMigrations, type MigrationsLock, readMigrationFiles } from './migration-lint/migrations-lock.js';

/**
 * `npm run migrations:lock`: appends the migrations the lock does not list yet. It never rewrites
 * an entry: an edited or removed migration makes it fail with the reason.
 */

const MIGRATIONS_DIRECTORY = fileURLToPath(new URL('../shared/db/migrations/', import.meta.url));
const LOCK_FILE = fileURLToPath(new URL('../shared/db/migrations.lock.json', import.meta.url));

const lock: MigrationsLock = existsSync(LOCK_FILE)
  ? (JSON.parse(readFileSync(LOCK_FILE, 'utf8')) as MigrationsLock)
  : { migrations: [] };
try {
  const updated = appendNewMigrations(lock, readMigrationFiles(MIGRATIONS_DIRECTORY));
  const added = updated.migrations.slice(lock.migrations.length).map((entry) => entry.name);
  writeFileSync(LOCK_FILE, `${JSON.stringify(updated, null, 2)}\n`);
  process.stdout.write(
    added.length > 0 ? `appended: ${added.join(', ')}\n` : 'the lock already lists every migration\n',
  );
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
