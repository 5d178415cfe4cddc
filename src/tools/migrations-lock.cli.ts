import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { appendNewMigrations, type MigrationsLock, readMigrationFiles } from './migration-lint/migrations-lock.js';

/**
 * `npm run migrations:lock`: appends the migrations the lock does not list yet. It never rewrites
 * an entry: an edited or removed migration makes it fail with the reason.
 */

// The migrations and their lock sit with the schema (src/shared/db), two folders up from this tool.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MIGRATIONS_DIRECTORY = resolve(root, 'src/shared/db/migrations');
const LOCK_FILE = resolve(root, 'src/shared/db/migrations.lock.json');

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
