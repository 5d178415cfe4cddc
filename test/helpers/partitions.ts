import { type CompiledQuery, Kysely, type LogEvent, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Db } from '../../src/shared/db/client.js';
import { rewardPartitionCount } from '../../src/shared/db/migrator.js';
import type { Database } from '../../src/shared/db/schema.js';
import { createMerchant, type MerchantFixture } from './fixtures.js';

/** The `rewards` partition (`rewards_p<remainder>`) that holds this merchant's rewards. */
export async function partitionOf(db: Db, merchantId: string): Promise<string> {
  const partitions = await rewardPartitionCount(db);
  const result = await sql<{ remainder: number }>`
    SELECT r AS remainder FROM generate_series(0, ${partitions - 1}) AS r
    WHERE satisfies_hash_partition('rewards'::regclass, ${partitions}, r, ${merchantId}::uuid)
  `.execute(db);
  const remainder = result.rows[0]?.remainder;
  if (remainder === undefined) throw new Error(`no partition of rewards takes merchant ${merchantId}`);
  return `rewards_p${remainder}`;
}

/** Two new merchants whose rewards land in two different partitions, with those partitions. */
export async function merchantsInTwoPartitions(
  db: Db,
): Promise<Array<{ merchant: MerchantFixture; partition: string }>> {
  const first = await createMerchant(db);
  const firstPartition = await partitionOf(db, first.id);
  for (let attempt = 0; attempt < 100; attempt++) {
    const second = await createMerchant(db);
    const secondPartition = await partitionOf(db, second.id);
    if (secondPartition !== firstPartition) {
      return [
        { merchant: first, partition: firstPartition },
        { merchant: second, partition: secondPartition },
      ];
    }
  }
  throw new Error('no two merchants in different partitions after 100 tries');
}

/**
 * A Kysely on the test's database that keeps every statement it runs (text and parameters), so that a
 * test can call the real repository functions and then EXPLAIN exactly what they sent.
 */
export function recordingDb(databaseUrl: string): { db: Kysely<Database>; statements: CompiledQuery[] } {
  const statements: CompiledQuery[] = [];
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 3 });
  // pg's Pool.end() resolves before its connections have closed: the test database dropped WITH (FORCE)
  // right after terminates one still closing, and that error, with no listener, would be thrown as an
  // uncaught exception into whatever test runs next. A closing connection's error is of no interest.
  pool.on('error', () => {});
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event: LogEvent) => {
      if (event.level === 'query' || event.level === 'error') statements.push(event.query);
    },
  });
  return { db, statements };
}

/**
 * The `rewards` partitions the plan of a statement reads or writes: EXPLAIN (not ANALYZE, so nothing
 * runs) with the statement's own parameters, which the planner uses for a custom plan, pruning the
 * partitions the merchant's id rules out (and reporting the subplans it removed at executor start).
 */
export async function partitionsInPlan(db: Db, statement: CompiledQuery): Promise<string[]> {
  const result = await db.executeQuery<{ 'QUERY PLAN': unknown }>({
    ...statement,
    sql: `EXPLAIN (FORMAT JSON) ${statement.sql}`,
  });
  const found = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const child of node) walk(child);
    } else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'Relation Name' && typeof value === 'string' && /^rewards_p\d+$/.exec(value) !== null)
          found.add(value);
        else walk(value);
      }
    }
  };
  walk(result.rows[0]?.['QUERY PLAN']);
  return [...found].sort();
}

/** Whether a statement reads or writes `rewards` at all. */
export function touchesRewards(statement: CompiledQuery): boolean {
  return /\brewards\b(?!_)/.exec(statement.sql.replace(/job_rewards/g, '')) !== null;
}
