import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DbOptions {
  connectionString: string;
  poolSize: number;
  applicationName: string;
}

/** One pool per process, built by the entry point and passed down. */
export function createDb({ connectionString, poolSize, applicationName }: DbOptions): Db {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    application_name: applicationName,
    // A dead database must surface as an error (503) quickly, never as a request that hangs.
    connectionTimeoutMillis: 2_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client that loses its connection emits 'error'; without a listener it would crash the process.
  pool.on('error', () => {});
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
