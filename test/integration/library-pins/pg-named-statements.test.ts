import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';

/**
 * The /betSlip lookup is sent by name (src/api/library-bypasses/prepared-statement.ts) so that each
 * connection parses and plans it once: that relies on node-postgres preparing a query config with a
 * `name` on its first use on a connection and, on every later use there, sending only the name and
 * values (a second Parse under the same name would be refused by Postgres: "prepared statement already
 * exists"). If node-postgres stopped keeping track, this fails here rather than as a 500 on /betSlip.
 */
describe('node-postgres named statements', () => {
  // One connection: every query below runs in the same Postgres session.
  const pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 1 });
  afterAll(() => pool.end());

  const statement = { name: 'library-pin-twice', text: 'SELECT $1::int * 2 AS doubled' };

  it('prepares the statement once per connection and executes it by name after that', async () => {
    const first = await pool.query<{ doubled: number }>({ ...statement, values: [21] });
    expect(first.rows).toEqual([{ doubled: 42 }]);
    const prepared = await pool.query<{ statement: string; prepareTime: Date; plans: number }>(
      `SELECT statement, prepare_time AS "prepareTime", (generic_plans + custom_plans)::int AS plans
       FROM pg_prepared_statements WHERE name = $1`,
      [statement.name],
    );
    expect(prepared.rows).toHaveLength(1);
    expect(prepared.rows[0]).toMatchObject({ statement: statement.text, plans: 1 });

    const second = await pool.query<{ doubled: number }>({ ...statement, values: [5] });
    expect(second.rows).toEqual([{ doubled: 10 }]);
    const after = await pool.query<{ prepareTime: Date; plans: number }>(
      `SELECT prepare_time AS "prepareTime", (generic_plans + custom_plans)::int AS plans
       FROM pg_prepared_statements WHERE name = $1`,
      [statement.name],
    );
    // The same statement, not parsed again (its prepare time unchanged), executed a second time.
    expect(after.rows).toEqual([{ prepareTime: prepared.rows[0]?.prepareTime, plans: 2 }]);
  });

  it('sends a query without a name unnamed: nothing stays prepared', async () => {
    const text = 'SELECT $1::text AS echoed';
    await pool.query(text, ['plain']);
    const { rows } = await pool.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM pg_prepared_statements WHERE statement = $1',
      [text],
    );
    expect(rows).toEqual([{ count: 0 }]);
  });
});
