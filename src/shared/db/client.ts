import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DbOptions {
  connectionString: string;
  poolSize: number;
  applicationName: string;
  /** How long a caller waits for a connection before it fails (default 1.5 s). */
  connectTimeoutMs?: number;
  /** Told about every connection error, idle or checked out, for the log. */
  onConnectionError?: (error: Error) => void;
}

/** One pool per process, built by the entry point and passed down. */
export function createDb({
  connectionString,
  poolSize,
  applicationName,
  connectTimeoutMs = 1_500,
  onConnectionError = () => {},
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
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
