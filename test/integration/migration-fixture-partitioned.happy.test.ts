import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { type MigrationEvent, runMigrations } from '../../src/shared/db/migration-runner.js';
import { migrations } from '../../src/shared/db/migrator.js';
import * as fixture from '../fixtures/migrations/rewards-index-and-check.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * The migration-under-load fixture on a hash-partitioned `rewards` (what the schema becomes when
 * partitioned by merchant): CONCURRENTLY cannot run on the parent, so it builds an index ON ONLY the
 * parent, one CONCURRENTLY per partition, attaches each, and the parent's index ends valid; the CHECK
 * is added NOT VALID and validated on every partition. Run twice, the second time finds nothing to do.
 */

const PARTITIONS = 4;
const { env } = useTestContext();

beforeAll(async () => {
  // This file's own database: `rewards` replaced by a partitioned table of the columns the fixture uses.
  await sql`DROP TABLE rewards CASCADE`.execute(env.db);
  await sql`
    CREATE TABLE rewards (
      id uuid NOT NULL DEFAULT gen_random_uuid(),
      merchant_id uuid NOT NULL,
      status text NOT NULL DEFAULT 'ACTIVE',
      cancelled_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    ) PARTITION BY HASH (merchant_id)
  `.execute(env.db);
  for (let remainder = 0; remainder < PARTITIONS; remainder++) {
    await sql`
      CREATE TABLE ${sql.id(`rewards_p${remainder}`)} PARTITION OF rewards
        FOR VALUES WITH (MODULUS ${sql.lit(PARTITIONS)}, REMAINDER ${sql.lit(remainder)})
    `.execute(env.db);
  }
  await sql`
    INSERT INTO rewards (merchant_id, status, cancelled_at)
    SELECT m, CASE WHEN i % 3 = 0 THEN 'CANCELLED' ELSE 'ACTIVE' END, CASE WHEN i % 3 = 0 THEN now() END
    FROM generate_series(1, 20000) AS i, LATERAL (SELECT gen_random_uuid() AS m) AS merchant
  `.execute(env.db);
});

describe('the index-and-check fixture on a partitioned rewards', () => {
  it('indexes every partition concurrently, attaches each, and validates the CHECK everywhere', async () => {
    const events: MigrationEvent[] = [];
    const applied = await runMigrations(
      env.db,
      { ...migrations({}), '2099-01-01T0000-fixture': fixture },
      { onEvent: (event) => events.push(event) },
    );
    expect(applied).toEqual(['2099-01-01T0000-fixture']);

    const indexes = await sql<{ table: string; index: string; valid: boolean; attached_to: string | null }>`
      SELECT t.relname AS table, c.relname AS index, i.indisvalid AS valid, parent.relname AS attached_to
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indexrelid
      JOIN pg_class t ON t.oid = i.indrelid
      LEFT JOIN pg_inherits h ON h.inhrelid = c.oid
      LEFT JOIN pg_class parent ON parent.oid = h.inhparent
      WHERE c.relname LIKE '%merchant_created_at_idx'
      ORDER BY t.relname
    `.execute(env.db);
    expect(indexes.rows).toEqual([
      { table: 'rewards', index: 'rewards_merchant_created_at_idx', valid: true, attached_to: null },
      ...Array.from({ length: PARTITIONS }, (_, n) => ({
        table: `rewards_p${n}`,
        index: `rewards_p${n}_merchant_created_at_idx`,
        valid: true,
        attached_to: 'rewards_merchant_created_at_idx',
      })),
    ]);

    const constraints = await sql<{ table: string; validated: boolean }>`
      SELECT conrelid::regclass::text AS table, convalidated AS validated FROM pg_constraint
      WHERE conname = 'rewards_cancelled_at_check' ORDER BY 1
    `.execute(env.db);
    expect(constraints.rows).toEqual([
      { table: 'rewards', validated: true },
      ...Array.from({ length: PARTITIONS }, (_, n) => ({ table: `rewards_p${n}`, validated: true })),
    ]);
    await expect(
      sql`INSERT INTO rewards (merchant_id, status) VALUES (gen_random_uuid(), 'CANCELLED')`.execute(env.db),
    ).rejects.toThrow(/rewards_cancelled_at_check/);
  });

  it('is safe to run again from its start (what a lock-timeout retry does)', async () => {
    await fixture.up(env.db);
    const count = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_class WHERE relname LIKE '%merchant_created_at_idx'
    `.execute(env.db);
    expect(count.rows[0]?.n).toBe(PARTITIONS + 1);
  });
});
