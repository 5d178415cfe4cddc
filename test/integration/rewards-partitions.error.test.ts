import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { migrateToLatest } from '../../src/shared/db/migrator.js';
import { useTestContext } from '../helpers/test-context.js';

/** The partition count is fixed by the first migration: a count it cannot use leaves the database as it was. */

const { env } = useTestContext();
let empty: Db;
let database: string;

beforeAll(async () => {
  database = `${new URL(env.databaseUrl).pathname.slice(1)}_empty`;
  await sql`CREATE DATABASE ${sql.id(database)}`.execute(env.db);
  const url = new URL(env.databaseUrl);
  url.pathname = `/${database}`;
  empty = createDb({ connectionString: url.toString(), poolSize: 1, applicationName: 'rewards-test-empty' });
});
afterAll(async () => {
  await empty?.destroy();
  if (database) await sql`DROP DATABASE IF EXISTS ${sql.id(database)} WITH (FORCE)`.execute(env.db);
});

async function tables(): Promise<string[]> {
  const result = await sql<{ name: string }>`
    SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'kysely%'
  `.execute(empty);
  return result.rows.map((row) => row.name);
}

describe('the baseline migration', () => {
  it.each([0, -1, 1.5, Number.NaN])('refuses %s partitions and creates nothing', async (rewardPartitions) => {
    await expect(migrateToLatest(empty, { rewardPartitions })).rejects.toThrow(
      /number of rewards partitions must be a positive integer/,
    );
    expect(await tables()).toEqual([]);
  });
});
