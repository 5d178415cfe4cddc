/**
 * The rules every migration follows so that it is safe on a large table under traffic
 * (docs/design.md §17). squawk (squawk-cli, a real Postgres parser) finds the statements that take a
 * long lock; the rules here are what squawk cannot know: which tables a migration created itself
 * (exempt: nobody uses them yet), which are partitioned, whether the file runs in a transaction, and
 * whether a backfill is batched.
 */

export interface CapturedMigration {
  name: string;
  /** false when the file says `export const transaction = false`. */
  transaction: boolean;
  /** The SQL its `up` sends, one entry per statement sent. */
  statements: string[];
  /** Checked against the rules; older migrations only teach the linter which tables exist. */
  linted: boolean;
}

export interface Finding {
  migration: string;
  /** Index into the migration's statements. */
  statement: number;
  rule: string;
  message: string;
}

/** The squawk rules this project enforces; squawk's other rules are matters of taste. */
export const SQUAWK_RULES = new Set([
  'require-concurrent-index-creation',
  'require-concurrent-index-deletion',
  'constraint-missing-not-valid',
  'adding-foreign-key-constraint',
  'disallowed-unique-constraint',
  'changing-column-type',
  'adding-not-nullable-field',
  'adding-required-field',
  'adding-field-with-default',
  'adding-serial-primary-key-field',
]);

const NAME = String.raw`((?:"[^"]+"|[a-z_][a-z0-9_$]*)(?:\.(?:"[^"]+"|[a-z_][a-z0-9_$]*))?)`;

function tableName(raw: string): string {
  const last = raw.split('.').at(-1) ?? raw;
  return last.replace(/^"|"$/g, '').toLowerCase();
}

/** SQL without comments and string literals, for pattern matching (a CHECK may hold any text). */
function stripped(statement: string): string {
  return statement
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/\s+/g, ' ')
    .trim();
}

interface Created {
  table: string;
  partitioned: boolean;
  partitionOf?: string;
}

function createdTables(sql: string): Created[] {
  const created: Created[] = [];
  const pattern = new RegExp(
    String.raw`create\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?${NAME}(\s+partition\s+of\s+${NAME})?`,
    'gi',
  );
  for (const match of sql.matchAll(pattern)) {
    const rest = sql.slice((match.index ?? 0) + match[0].length);
    const end = rest.search(/;\s*create\s/i);
    const body = end === -1 ? rest : rest.slice(0, end);
    created.push({
      table: tableName(match[1] as string),
      partitioned: /\)\s*partition\s+by\s/i.test(body) || /^\s*partition\s+by\s/i.test(body),
      partitionOf: match[3] ? tableName(match[3]) : undefined,
    });
  }
  return created;
}

/** The existing table a statement acts on, if it is one of the kinds the rules look at. */
function targetTable(sql: string): string | undefined {
  const patterns = [
    new RegExp(String.raw`^alter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?${NAME}`, 'i'),
    new RegExp(
      String.raw`^create\s+(?:unique\s+)?index\s+(?:concurrently\s+)?(?:if\s+not\s+exists\s+)?(?:${NAME}\s+)?on\s+(?:only\s+)?${NAME}`,
      'i',
    ),
    new RegExp(String.raw`^update\s+(?:only\s+)?${NAME}`, 'i'),
    new RegExp(String.raw`^delete\s+from\s+(?:only\s+)?${NAME}`, 'i'),
    new RegExp(String.raw`^insert\s+into\s+${NAME}`, 'i'),
  ];
  for (const pattern of patterns) {
    const match = sql.match(pattern);
    if (!match) continue;
    const name = match[2] ?? match[1];
    return name ? tableName(name) : undefined;
  }
  return undefined;
}

/** `-- squawk-ignore rule[, rule]` in a statement silences those rules for it (ours and squawk's). */
function ignoredRules(statement: string): Set<string> {
  const ignored = new Set<string>();
  for (const match of statement.matchAll(/--\s*squawk-ignore\s+([a-z0-9_,\s-]+)/gi)) {
    for (const rule of (match[1] as string).split(/[\s,]+/)) if (rule) ignored.add(rule.toLowerCase());
  }
  return ignored;
}

export interface Catalogue {
  /** Tables known partitioned, by the migrations before (and including) the one being checked. */
  partitioned: Set<string>;
}

export function emptyCatalogue(): Catalogue {
  return { partitioned: new Set() };
}

/**
 * This project's rules over one migration, and the filter squawk's findings go through: statements
 * on tables the same migration created are exempt, and so is the first step of building an index on
 * a partitioned table (`CREATE INDEX … ON ONLY parent`, instant, the partitions' indexes built
 * concurrently and attached after). Updates `catalogue` with the tables the migration creates.
 */
export function checkMigration(
  migration: CapturedMigration,
  catalogue: Catalogue,
  squawkFindings: readonly Finding[] = [],
): Finding[] {
  const createdHere = new Set<string>();
  const findings: Finding[] = [];
  const addedNotValid = new Set<string>();

  migration.statements.forEach((statement, index) => {
    const sql = stripped(statement);
    for (const created of createdTables(sql)) {
      createdHere.add(created.table);
      if (created.partitioned) catalogue.partitioned.add(created.table);
    }
    if (!migration.linted) return;

    const table = targetTable(sql);
    const exempt = table !== undefined && createdHere.has(table);
    const ignored = ignoredRules(statement);
    const report = (rule: string, message: string) => {
      if (!exempt && !ignored.has(rule)) findings.push({ migration: migration.name, statement: index, rule, message });
    };

    const concurrently = /^(?:create\s+(?:unique\s+)?index|drop\s+index|reindex)\b[^;]*\bconcurrently\b/i.test(sql);
    if (concurrently && migration.transaction) {
      report(
        'concurrently-in-transaction',
        'CONCURRENTLY cannot run in a transaction: put it in a migration that says `export const transaction = false`',
      );
    }
    if (/^create\s+(?:unique\s+)?index\s+concurrently\b/i.test(sql) && table && catalogue.partitioned.has(table)) {
      report(
        'concurrently-on-partitioned-table',
        `${table} is partitioned, and a partitioned table cannot take CREATE INDEX CONCURRENTLY: create the index ` +
          `ON ONLY ${table}, build each partition's index CONCURRENTLY, then ALTER INDEX … ATTACH PARTITION each`,
      );
    }

    for (const match of sql.matchAll(/add\s+constraint\s+("[^"]+"|[a-z_][a-z0-9_$]*)[^;]*?\bnot\s+valid\b/gi)) {
      addedNotValid.add(tableName(match[1] as string));
    }
    const validated = sql.match(/validate\s+constraint\s+("[^"]+"|[a-z_][a-z0-9_$]*)/i);
    if (validated && migration.transaction && addedNotValid.has(tableName(validated[1] as string))) {
      report(
        'validate-in-same-transaction',
        'VALIDATE CONSTRAINT in the transaction that added it NOT VALID keeps the ACCESS EXCLUSIVE lock through ' +
          'the scan: validate in a later migration, or make this one `transaction = false`',
      );
    }

    const writes = /^(?:update|delete\s+from)\s/i.test(sql) || /^insert\s+into\s[^;]*\bselect\b/i.test(sql);
    if (writes && table) {
      if (migration.transaction || !/\blimit\b/i.test(sql)) {
        report(
          'backfill-in-batches',
          `a backfill of ${table} must run in batches: a migration with \`transaction = false\` whose statement ` +
            'takes a LIMITed batch (e.g. WHERE id IN (SELECT id … LIMIT n)), looped until it changes nothing',
        );
      }
    }
  });

  for (const finding of squawkFindings) {
    const statement = migration.statements[finding.statement] ?? '';
    const sql = stripped(statement);
    const table = targetTable(sql);
    if (table !== undefined && createdHere.has(table)) continue;
    if (ignoredRules(statement).has(finding.rule)) continue;
    const onlyParent = /^create\s+(?:unique\s+)?index\s[^;]*\bon\s+only\s/i.test(sql);
    if (
      finding.rule === 'require-concurrent-index-creation' &&
      onlyParent &&
      table &&
      catalogue.partitioned.has(table)
    ) {
      continue;
    }
    findings.push(finding);
  }
  return findings.sort((a, b) => a.statement - b.statement);
}
