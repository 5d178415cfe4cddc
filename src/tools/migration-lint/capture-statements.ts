import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { MigrationModule } from '../../shared/db/migration-runner.js';

/**
 * The SQL a migration's `up` sends, without a database: it runs against Kysely's DummyDriver, which
 * answers every query with no rows, and every compiled statement is recorded. A migration that
 * reads before it acts (a catalogue check, a backfill loop) takes its "nothing there" path: a
 * backfill loop runs one batch, which is the statement worth checking. A text sent with several
 * statements in it is split, so each is checked (and exempted) on its own.
 */
export async function captureStatements(migration: MigrationModule): Promise<string[]> {
  const statements: string[] = [];
  const db = new Kysely<any>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => {
      if (event.level === 'query') statements.push(...splitStatements(event.query.sql));
    },
  });
  try {
    await migration.up(db);
  } finally {
    await db.destroy();
  }
  return statements;
}

/** Splits SQL text at the semicolons that end statements (not inside quotes, dollar quotes or comments). */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const skip =
      rest.match(/^'(?:[^']|'')*'/) ??
      rest.match(/^"(?:[^"]|"")*"/) ??
      rest.match(/^--[^\n]*/) ??
      rest.match(/^\/\*[\s\S]*?\*\//) ??
      dollarQuoted(rest);
    if (skip) {
      i += skip[0].length;
    } else if (text[i] === ';') {
      statements.push(text.slice(start, i));
      start = ++i;
    } else {
      i++;
    }
  }
  statements.push(text.slice(start));
  return statements.map((statement) => statement.trim()).filter((statement) => statement.length > 0);
}

function dollarQuoted(rest: string): RegExpMatchArray | null {
  const tag = rest.match(/^\$[a-zA-Z_]*\$/);
  if (!tag) return null;
  const end = rest.indexOf(tag[0], tag[0].length);
  return end === -1 ? null : ([rest.slice(0, end + tag[0].length)] as RegExpMatchArray);
}
