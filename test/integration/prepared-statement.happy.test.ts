import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PreparedStatement, queryPrepared } from '../../src/api/library-bypasses/prepared-statement.js';
import { createDb, type Db } from '../../src/shared/db/client.js';
import type { Database } from '../../src/shared/db/schema.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';

/**
 * `queryPrepared` runs a statement straight on the pool under its name, and the same statement through
 * Kysely when given a transaction or an instance `createDb` did not build: all answer the same rows,
 * and only the pool's connection keeps the statement prepared under that name.
 */

const TWICE: PreparedStatement = {
  name: 'test-prepared-twice',
  text: 'SELECT $1::int * 2 AS doubled, $2::text AS label',
};

describe('queryPrepared', () => {
  let env: TestEnvironment;
  // One connection, so that the statement prepared by one query is visible to the next.
  let db: Db;

  beforeAll(async () => {
    env = await createTestEnvironment();
    db = createDb({ connectionString: env.databaseUrl, poolSize: 1, applicationName: 'prepared-test' });
  });

  afterAll(async () => {
    await db?.destroy();
    await env?.close();
  });

  it('answers from the pool, the statement prepared on the connection under its name', async () => {
    expect(await queryPrepared(db, TWICE, [21, 'pool'])).toEqual([{ doubled: 42, label: 'pool' }]);
    expect(await queryPrepared(db, TWICE, [5, 'again'])).toEqual([{ doubled: 10, label: 'again' }]);
    const { rows } = await sql<{ name: string; statement: string }>`
      SELECT name, statement FROM pg_prepared_statements WHERE name = 'test-prepared-twice'
    `.execute(db);
    expect(rows).toEqual([{ name: 'test-prepared-twice', statement: TWICE.text }]);
  });

  it('answers the same rows inside a transaction, on the transaction’s connection', async () => {
    const marker: PreparedStatement = {
      name: 'test-marker',
      text: "SELECT current_setting('test.marker', true) AS marker",
    };
    const rows = await db.transaction().execute(async (trx) => {
      const answer = await queryPrepared<{ doubled: number; label: string }>(trx, TWICE, [4, 'trx']);
      // A setting local to the transaction proves the statement ran on its connection, inside it.
      await sql`SELECT set_config('test.marker', 'inside', true)`.execute(trx);
      const visible = await queryPrepared<{ marker: string }>(trx, marker, []);
      return { answer, visible };
    });
    expect(rows.answer).toEqual([{ doubled: 8, label: 'trx' }]);
    expect(rows.visible).toEqual([{ marker: 'inside' }]);
  });

  it('runs the statement unnamed through an instance built elsewhere', async () => {
    const pool = new pg.Pool({ connectionString: env.databaseUrl, max: 1 });
    // The file's database is dropped WITH (FORCE) right after this test: a connection still closing then
    // hears 57P01, which the pool re-emits as 'error' and, unheard, fails the run after every test passed.
    pool.on('error', () => {});
    const other = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    try {
      const echo: PreparedStatement = { name: 'test-echo', text: 'SELECT $1::text AS echoed' };
      expect(await queryPrepared(other, echo, ['plain'])).toEqual([{ echoed: 'plain' }]);
      const { rows } = await sql<{ count: string }>`SELECT count(*) FROM pg_prepared_statements`.execute(other);
      expect(rows).toEqual([{ count: '0' }]);
    } finally {
      await other.destroy();
    }
  });
});
