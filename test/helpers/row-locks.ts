import pg from 'pg';

/**
 * Holds locks in an open transaction of the test's own (straight to Postgres, never through a
 * fault proxy), so that a worker's or the API's statement blocks at a chosen point and a fault can
 * be injected exactly there: while a transaction is checked out, or in a job's first batch.
 * Releasing rolls back: the locked rows are left as they were.
 */
export interface HeldLocks {
  release(): Promise<void>;
}

/** `SELECT … FOR UPDATE` on these rewards. */
export async function lockRewards(databaseUrl: string, rewardIds: readonly string[]): Promise<HeldLocks> {
  return holdInTransaction(databaseUrl, 'SELECT id FROM rewards WHERE id = ANY($1::uuid[]) FOR UPDATE', [
    [...rewardIds],
  ]);
}

/** An ACCESS EXCLUSIVE lock on a table: every read of it waits. */
export async function lockTable(databaseUrl: string, table: string): Promise<HeldLocks> {
  return holdInTransaction(databaseUrl, `LOCK TABLE ${pg.escapeIdentifier(table)} IN ACCESS EXCLUSIVE MODE`, []);
}

/**
 * What a long read holds: an ACCESS SHARE lock on a table. Reads and writes go on; an `ALTER TABLE` of
 * it waits (and, without `lock_timeout`, queues every later statement on the table behind itself).
 */
export async function holdReaderLock(databaseUrl: string, table: string): Promise<HeldLocks> {
  return holdInTransaction(databaseUrl, `LOCK TABLE ${pg.escapeIdentifier(table)} IN ACCESS SHARE MODE`, []);
}

async function holdInTransaction(databaseUrl: string, statement: string, params: unknown[]): Promise<HeldLocks> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'rewards-test-locks' });
  client.on('error', () => {});
  await client.connect();
  await client.query('BEGIN');
  await client.query(statement, params);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await client.query('ROLLBACK').catch(() => {});
      await client.end().catch(() => {});
    },
  };
}

/** `SELECT … FOR UPDATE` on a job's audit row: the worker's write of the job's end waits. */
export async function lockJobRecord(databaseUrl: string, jobId: string): Promise<HeldLocks> {
  return holdInTransaction(databaseUrl, 'SELECT id FROM cancellation_jobs WHERE id = $1::uuid FOR UPDATE', [jobId]);
}
