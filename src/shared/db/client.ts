import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

/** What a repository function runs its statements on: the pool, or a transaction its caller opened. */
export type Executor = Kysely<Database> | Transaction<Database>;

export interface DbOptions {
  connectionString: string;
  poolSize: number;
  applicationName: string;
  /** How long a caller waits for a connection before it fails (DB_CONNECT_TIMEOUT_MS; default 1.5 s). */
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

/** DB_CONNECT_TIMEOUT_MS's default, for a pool built without the configuration (tests). */
const DEFAULT_CONNECT_TIMEOUT_MS = 1_500;

/**
 * A connection idle this long is closed: the pool shrinks back after a burst, but keeps its connections
 * across the short lulls of steady traffic (node-postgres' default, 10 s, reconnects more often).
 */
const IDLE_CONNECTION_CLOSE_MS = 30_000;

/** The pool under each Kysely instance `createDb` built. */
const pools = new WeakMap<Executor, pg.Pool>();

/**
 * The node-postgres pool under a Kysely instance built by `createDb`, for the one caller that talks to
 * node-postgres itself (the /betSlip lookup, src/api/library-bypasses/prepared-statement.ts); undefined
 * for a transaction or an instance built elsewhere, whose statements go through Kysely.
 */
export function poolOf(db: Executor): pg.Pool | undefined {
  return pools.get(db);
}

/** One pool per process, built by the entry point and passed down. */
export function createDb({
  connectionString,
  poolSize,
  applicationName,
  connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS,
  onConnectionError = () => {},
  timeouts,
}: DbOptions): Db {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    application_name: applicationName,
    // A dead database must surface as an error (503, or a job put back) quickly, never as a hang.
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: IDLE_CONNECTION_CLOSE_MS,
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
  });
  pool.on('error', onConnectionError);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}
