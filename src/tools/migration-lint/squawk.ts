import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CapturedMigration, type Finding, SQUAWK_RULES } from './migration-rules.js';

interface SquawkViolation {
  file: string;
  /** 0-based. */
  line: number;
  rule_name: string;
  message: string;
  help?: string;
}

/**
 * squawk (squawk-cli, from npm with its platform binary) over each migration's captured SQL: one
 * `.sql` file per migration, one statement after another, each line mapped back to its statement.
 * Only the rules in SQUAWK_RULES are kept; `checkMigration` then drops what our exemptions cover.
 */
export function squawkFindings(squawkBin: string, migrations: readonly CapturedMigration[]): Map<string, Finding[]> {
  const linted = migrations.filter((migration) => migration.linted);
  const byMigration = new Map<string, Finding[]>(linted.map((migration) => [migration.name, []]));
  if (linted.length === 0) return byMigration;
  const directory = mkdtempSync(join(tmpdir(), 'lint-migrations-'));
  const startLines = new Map<string, number[]>();
  try {
    for (const migration of linted) {
      const starts: number[] = [];
      let line = 0;
      const text = migration.statements
        .map((statement) => {
          starts.push(line);
          const body = `${statement.trim().replace(/;\s*$/, '')};\n`;
          line += body.split('\n').length - 1;
          return body;
        })
        .join('');
      startLines.set(migration.name, starts);
      writeFileSync(join(directory, `${migration.name}.sql`), text);
    }
    const result = spawnSync(squawkBin, ['--reporter', 'json', '--pg-version', '15', '*.sql'], {
      cwd: directory,
      encoding: 'utf8',
    });
    if (result.error) throw result.error;
    let violations: SquawkViolation[];
    try {
      violations = JSON.parse(result.stdout || '[]') as SquawkViolation[];
    } catch {
      throw new Error(`squawk did not answer JSON (exit ${result.status}): ${result.stderr || result.stdout}`);
    }
    for (const violation of violations) {
      if (!SQUAWK_RULES.has(violation.rule_name)) continue;
      const name = violation.file.replace(/^.*\//, '').replace(/\.sql$/, '');
      const starts = startLines.get(name) ?? [0];
      let statement = 0;
      while (statement + 1 < starts.length && (starts[statement + 1] as number) <= violation.line) statement++;
      byMigration.get(name)?.push({
        migration: name,
        statement,
        rule: violation.rule_name,
        message: violation.help ? `${violation.message} ${violation.help}` : violation.message,
      });
    }
    return byMigration;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
