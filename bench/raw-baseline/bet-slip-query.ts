import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * The floor of POST /betSlip as the issue defines it: one indexed lookup of one row whose column IS
 * the ~2 KB JSON answer. The raw server keeps such rows in a table of its own in the bench database
 * (a fresh copy per phase, so it never outlives the run), filled at start-up with the API's own
 * answer for the seeded session. Not the service's query: running the service's joins and JSON
 * building here would make the floor as slow as the service's database work and hide what that
 * work costs. The API's answer carries a fresh wallet balance; this one is fixed, by design.
 */
const CREATE_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS raw_bet_slip_answers (token_digest bytea PRIMARY KEY, body text NOT NULL)
`;
const STORE_SQL = `
  INSERT INTO raw_bet_slip_answers (token_digest, body) VALUES ($1, $2)
  ON CONFLICT (token_digest) DO UPDATE SET body = excluded.body
`;
const FIND_SQL = 'SELECT body FROM raw_bet_slip_answers WHERE token_digest = $1';

// Tokens are looked up by their SHA-256 digest, as the API stores them (docs/design.md §8).
const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/** Stores `body` as the answer for `token`; run once, before the server listens. */
export async function storeBetSlipAnswer(pool: pg.Pool, token: string, body: string): Promise<void> {
  await pool.query(CREATE_TABLE_SQL);
  await pool.query(STORE_SQL, [digest(token), body]);
}

/** The stored answer for the token, or undefined when there is none. */
export async function findBetSlipBody(pool: pg.Pool, token: string): Promise<string | undefined> {
  // An unnamed query, as the API's (kysely's) are: parsed and planned on every call.
  const { rows } = await pool.query<{ body: string }>(FIND_SQL, [digest(token)]);
  return rows[0]?.body;
}
