import { CompiledQuery } from 'kysely';
import type pg from 'pg';
import { type Executor, poolOf } from '../../shared/db/client.js';

/**
 * A constant statement sent to Postgres under a name, so that each connection parses and plans it once
 * and then only executes it. Kysely sends every statement unnamed (parsed and planned on every call);
 * node-postgres prepares a statement when its query config carries a `name`, once per connection, and
 * sends only the name and values after that (its documented "prepared statements").
 *
 * Where the API steps around Kysely (the /betSlip lookup only, bet-slip-session.ts): planning that
 * three-table join costs several times running it, and Kysely's connection hand-over (acquire, run,
 * release, each a promise of its own) is paid on every request. Measured on Node 24: the library's way
 * (the same lookup built by Kysely, unnamed) cost +67 % CPU per /betSlip answer. A pooler in
 * transaction mode (PgBouncer before 1.21) does not keep prepared statements: run the API against
 * Postgres or a session-mode pooler.
 */
export interface PreparedStatement {
  /** Unique per text: node-postgres refuses a second text under a name it has prepared. */
  name: string;
  /** Constant: only the values (`$1`, `$2`…) change from one call to the next. */
  text: string;
}

/**
 * Runs the statement by name straight on the node-postgres pool under `db` (`pool.query({ name, text,
 * values })`). Given a transaction, or an instance `createDb` did not build, it runs the same text
 * through Kysely instead (unnamed, on that executor's connection): the same rows.
 */
export async function queryPrepared<R>(db: Executor, statement: PreparedStatement, values: unknown[]): Promise<R[]> {
  const pool = poolOf(db);
  if (pool === undefined) return (await db.executeQuery<R>(CompiledQuery.raw(statement.text, values))).rows;
  return (await pool.query<R & pg.QueryResultRow>({ name: statement.name, text: statement.text, values })).rows;
}
