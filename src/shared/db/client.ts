import { CompiledQuery, Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

/** What a repository function runs its statements on: the pool, or a transaction its caller opened. */
export type Executor = Kysely<Database> | Transaction<Database>;

export interface DbOptions {
  connectionString: string;
  poolSize: number;
  applicationName: string;
  /** How long a caller waits for a connection before it fails (default 1.5 s). */
  connectTimeoutMs?: number;
  /** Told about every connection error, idle or checked out, for the log. */
  onConnectionError?: (error: Error) => void;
  /** Postgres timeouts of every connection of the pool; absent (or 0): none set (the migration command). */
  timeouts?: PoolTimeouts;
}

/** Milliseconds; 0 leaves the server's setting. */
interface PoolTimeouts {
  statementMs: number;
  lockMs: number;
  idleInTransactionMs: number;
}

/**
 * The timeouts as node-postgres connection settings: sent in the startup message, so every connection
 * has them from its first statement, with no `SET` round trip and nothing a released client could lose.
 * node-postgres leaves out a setting of 0, which keeps the server's.
 */
function timeoutSettings(timeouts: PoolTimeouts | undefined): pg.PoolConfig {
  if (!timeouts) return {};
  return {
    statement_timeout: timeouts.statementMs,
    lock_timeout: timeouts.lockMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
  };
}

/** The text of each statement registered with `preparedStatement`, and the name it is sent under. */
const preparedNames = new Map<string, string>();

/**
 * Registers a constant statement on a hot path to be sent as a named prepared statement: Postgres then
 * parses and plans it once per connection instead of on every call. For a join of a few tables the
 * plan costs several times the lookup itself (the /betSlip read, measured 2026-11-22: ~0.3 ms of
 * planning for ~0.04 ms of execution). Returns the text, to be run with `CompiledQuery.raw`. (A pooler in transaction mode,
 * such as PgBouncer before 1.21, does not keep prepared statements: run the API against Postgres or a
 * session-mode pooler.)
 */
export function preparedStatement(name: string, text: string): string {
  preparedNames.set(text, name);
  return text;
}

/**
 * A query compiled from a template whose text is the same on every call (only its parameters differ),
 * sent as the named prepared statement `name` (see `preparedStatement`).
 */
export function prepared<R>(name: string, query: CompiledQuery<R>): CompiledQuery<R> {
  preparedStatement(name, query.sql);
  return query;
}

/**
 * Kysely hands node-postgres a statement as text and values; node-postgres prepares one only when it
 * is given a name. So each client's `query` learns the registered texts and adds their names: the
 * one place the database layer is stepped around, and only for statements registered above.
 */
function sendPreparedByName(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const named = (...args: unknown[]) => {
    const [text, values, ...rest] = args;
    const name = typeof text === 'string' ? preparedNames.get(text) : undefined;
    return name === undefined ? query(...args) : query({ name, text, values }, ...rest);
  };
  client.query = named as typeof client.query;
}

/** The pool under each Kysely instance this module built, for `queryPrepared`. */
const poolOf = new WeakMap<Executor, pg.Pool>();

/**
 * Runs a statement registered with `preparedStatement` straight on the pool, by name: one request to
 * node-postgres with no query builder in between. For the hottest reads (/betSlip runs one per request),
 * Kysely's connection hand-over (acquire, run, release, each a promise of its own) cost about as much of
 * the API's single thread as the query's own client work (profile of 2026-11-25). Given a transaction or
 * an instance built elsewhere, it runs the statement through Kysely instead: the same statement, the same
 * rows.
 */
export async function queryPrepared<R>(db: Executor, text: string, values: unknown[]): Promise<R[]> {
  const pool = poolOf.get(db);
  const name = preparedNames.get(text);
  if (pool === undefined || name === undefined) return (await db.executeQuery<R>(CompiledQuery.raw(text, values))).rows;
  return (await pool.query<R & pg.QueryResultRow>({ name, text, values })).rows;
}

/** One pool per process, built by the entry point and passed down. */
export function createDb({
  connectionString,
  poolSize,
  applicationName,
  connectTimeoutMs = 1_500,
  onConnectionError = () => {},
  timeouts,
}: DbOptions): Db {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    application_name: applicationName,
    // A dead database must surface as an error (503, or a job put back) quickly, never as a hang.
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    // Dead peers that never send a FIN (a cut network) are noticed by TCP keepalive.
    keepAlive: true,
    ...timeoutSettings(timeouts),
  });
  // A client that loses its connection emits 'error'. The pool listens on idle clients only and
  // re-emits here; a client checked out for a query or a transaction has no listener of its own, and an
  // unheard 'error' event ends the process (node-postgres #1449, #2439). So every client gets one
  // the moment it is made. The failed query itself rejects, and its caller deals with that (503, or
  // a job retried); the broken client is discarded by the pool when it is released.
  pool.on('connect', (client) => {
    client.on('error', onConnectionError);
    sendPreparedByName(client);
  });
  pool.on('error', onConnectionError);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  poolOf.set(db, pool);
  return db;
}
