import { readdirSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { MigrationModule } from '../shared/db/migration-runner.js';
import { migrations } from '../shared/db/migrator.js';
import { captureStatements } from './migration-lint/capture-statements.js';
import {
  type CapturedMigration,
  checkMigration,
  emptyCatalogue,
  type Finding,
} from './migration-lint/migration-rules.js';
import { squawkFindings } from './migration-lint/squawk.js';

/**
 * `npm run lint:migrations [folder…]`: the rules of docs/design.md §17 over every migration file
 * (default src/shared/db/migrations), in the order they run. Migrations named before LINTED_FROM ran
 * before these rules existed and are frozen (append-only); they are read only to learn which tables
 * exist and which are partitioned.
 */
const LINTED_FROM = '2026-11-25T0000';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const folders = process.argv.slice(2);
const directories =
  folders.length > 0 ? folders.map((folder) => resolve(folder)) : [join(root, 'src/shared/db/migrations')];

const files = directories
  .flatMap((directory) =>
    readdirSync(directory)
      .filter((file) => /\.(ts|js)$/.test(file) && !file.endsWith('.d.ts'))
      .map((file) => ({ name: basename(file, extname(file)), path: join(directory, file) })),
  )
  .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

const listed = migrations({});
const captured: CapturedMigration[] = [];
for (const file of files) {
  // A file that exports a factory rather than `up` is linted as src/shared/db/migrator.ts builds it.
  const module = (await import(pathToFileURL(file.path).href)) as Partial<MigrationModule>;
  const migration = typeof module.up === 'function' ? (module as MigrationModule) : listed[file.name];
  if (!migration) throw new Error(`${file.path} exports no up() and src/shared/db/migrator.ts does not list it`);
  captured.push({
    name: file.name,
    transaction: migration.transaction !== false,
    statements: await captureStatements(migration),
    linted: file.name >= LINTED_FROM,
  });
}

const fromSquawk = squawkFindings(join(root, 'node_modules/.bin/squawk'), captured);
const catalogue = emptyCatalogue();
const findings: Finding[] = captured.flatMap((migration) =>
  checkMigration(migration, catalogue, fromSquawk.get(migration.name) ?? []),
);

for (const finding of findings) {
  const statement = captured.find((migration) => migration.name === finding.migration)?.statements[finding.statement];
  const excerpt = (statement ?? '').replace(/\s+/g, ' ').trim().slice(0, 160);
  process.stdout.write(`${finding.migration}: ${finding.rule}: ${finding.message}\n    ${excerpt}\n`);
}
const checked = captured.filter((migration) => migration.linted).length;
process.stdout.write(
  findings.length === 0
    ? `${checked} migration(s) checked (${captured.length - checked} older, frozen): no problems\n`
    : `${findings.length} problem(s) in ${new Set(findings.map((f) => f.migration)).size} migration(s); see docs/design.md §17\n`,
);
process.exitCode = findings.length === 0 ? 0 : 1;
