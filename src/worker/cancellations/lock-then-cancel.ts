import { type RawBuilder, sql } from 'kysely';

/**
 * The one lock order of every statement that cancels rewards (reward-cancellations.repository.ts, at its
 * top), as two CTEs of that statement: `locked` takes the row lock of each ACTIVE reward the condition
 * picks, in reward id order (at most `limit` of them, when given), and `updated` cancels exactly those
 * rows for the job, found again by their address (a TID scan, no second index descent; a row keeps its
 * address while locked), paired with the merchant's id, which prunes the statement to the merchant's
 * partition. A reward another job cancelled while this one waited for its lock is dropped by the lock's
 * recheck (no longer ACTIVE). `updated` returns the ids it changed.
 *
 * `rows` is a condition on `rewards r` that names the merchant (`r.merchant_id = …`). The `ARRAY(SELECT …)`
 * form matters: a join on the CTE turns into a sequential scan from a few thousand rows on (EXPLAIN,
 * 2026-11-20).
 */
export function lockThenCancel(params: {
  jobId: string;
  merchantId: string;
  rows: RawBuilder<unknown>;
  limit?: number;
}): RawBuilder<unknown> {
  const { jobId, merchantId, rows, limit } = params;
  return sql`locked AS MATERIALIZED (
      SELECT r.ctid AS address FROM rewards r
      WHERE ${rows}
      ORDER BY r.id
      ${limit === undefined ? sql`` : sql`LIMIT ${limit}`}
      FOR NO KEY UPDATE OF r
    ),
    updated AS (
      UPDATE rewards r
      SET status = 'CANCELLED', cancelled_at = now(), cancellation_job_id = ${jobId}
      WHERE r.merchant_id = ${merchantId}
        AND r.ctid = ANY(ARRAY(SELECT address FROM locked)) AND r.status = 'ACTIVE'
      RETURNING r.id
    )`;
}
