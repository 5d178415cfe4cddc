import fc from 'fast-check';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';

/**
 * The /betSlip answer is assembled from text Postgres writes (src/api/library-bypasses/bet-slip-session.ts,
 * bet-slip-answer.ts): each profile field as `to_json(text)::text`, spliced into the answer as a JSON
 * string, and the balance as node-postgres hands over a `numeric`, spliced as a JSON number. That relies
 * on Postgres escaping a string exactly as JSON.stringify does (the answer's bytes stay what the library's
 * own serializer would write) and on node-postgres returning `numeric` as Postgres' exact text, never a
 * float. If either changes, this fails here rather than in a player's answer.
 */
describe('Postgres and node-postgres write JSON text as the /betSlip answer needs', () => {
  const pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 1 });
  afterAll(() => pool.end());

  /** Postgres text holds any character but NUL; the special ones get their own share of the runs. */
  const special = fc.constantFrom(
    '"',
    '\\',
    '/',
    '\b',
    '\f',
    '\n',
    '\r',
    '\t',
    '\u0001',
    '\u001f',
    '\u007f',
    '\u2028',
    '\u2029',
    'é',
    '😀',
    '\ud834\udd1e',
  );
  const text = fc
    .oneof(
      fc.string({ unit: 'binary' }),
      fc.string({ unit: special }),
      fc.string({ unit: fc.oneof(special, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })) }),
    )
    .filter((value) => !value.includes('\u0000'));

  it('to_json(text)::text escapes every string exactly as JSON.stringify does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(text, { minLength: 1, maxLength: 20 }), async (values) => {
        const { rows } = await pool.query<{ json: string }>(
          'SELECT to_json(value)::text AS json FROM unnest($1::text[]) WITH ORDINALITY AS t(value, n) ORDER BY n',
          [values],
        );
        expect(rows.map((row) => row.json)).toEqual(values.map((value) => JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });

  it('returns numeric as its exact text, trailing zeros and all', async () => {
    const values = ['7.25', '8.50', '0', '-0.000001', '12345678901234567890.123456789012', '1e3'];
    const { rows } = await pool.query<{ n: unknown }>(
      'SELECT value::numeric AS n FROM unnest($1::text[]) WITH ORDINALITY AS t(value, i) ORDER BY i',
      [values],
    );
    expect(rows.map((row) => row.n)).toEqual([
      '7.25',
      '8.50',
      '0',
      '-0.000001',
      '12345678901234567890.123456789012',
      '1000',
    ]);
  });
});
