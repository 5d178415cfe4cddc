import { sql } from 'kysely';
import type { Executor } from '../../shared/db/client.js';

/**
 * The retention sweeper's statements (docs/design.md §13). Each delete is set-based and bounded:
 * it removes at most `limit` rows, picked through an index by a LIMITed subquery, so one statement (its
 * own short transaction) holds its row locks for milliseconds, whatever the backlog. Each returns how
 * many rows it removed; the sweeper repeats it until fewer than `limit` come back.
 *
 * Rows hanging off a batch of jobs or sessions are looked up one parent at a time (a LATERAL join
 * over the parents' ids: an index probe each), oldest rows through their time index in order; either
 * way the statement reads the rows it removes, never the table's dead or live rest.
 *
 * The subquery hands over the rows' addresses (`ctid`, read in the same statement, so they are the
 * rows it picked), and the delete fetches exactly those pages (a TID scan). Handing over keys instead
 * (`WHERE (key) IN (SELECT key … LIMIT n)`) let the planner hash the batch and scan the whole table for
 * it: measured on 1,000,000 job_rewards rows, ~110 ms per batch of 5,000 and growing with the table.
 */

/** The tables that keep rows per job, besides the job's own audit row: each swept before its job. */
export const perJobTables = ['job_rewards', 'job_cancel_slices', 'job_unapplied_identifiers'] as const;
type PerJobTable = (typeof perJobTables)[number];

/** The tables the sweeper empties of what has outlived RETENTION_MS. */
export const retentionTables = [
  ...perJobTables,
  'cancellation_jobs',
  'webhook_deliveries',
  'bet_slip_items',
  'sessions',
  'admin_audit_log',
] as const;
export type RetentionTable = (typeof retentionTables)[number];

/** A job whose audit row says it ended (the rows of queued and running jobs are never removed). */
const FINISHED = sql`state IN ('completed', 'failed', 'cancelled')`;

function affected(result: { numAffectedRows?: bigint }): number {
  return Number(result.numAffectedRows ?? 0n);
}

/** A job's key: its records are keyed by merchant first. */
export interface ExpiredJob {
  merchantId: string;
  id: string;
}

/** Finished jobs that ended before `cutoff`, oldest first (index cancellation_jobs_finished_at_idx). */
export async function expiredJobs(db: Executor, cutoff: Date, limit: number): Promise<ExpiredJob[]> {
  const { rows } = await sql<ExpiredJob>`
    SELECT merchant_id AS "merchantId", id FROM cancellation_jobs
    WHERE finished_at < ${cutoff} AND ${FINISHED}
    ORDER BY finished_at
    LIMIT ${limit}
  `.execute(db);
  return rows;
}

/** The jobs as two parallel uuid arrays, for `unnest`. */
function jobColumns(jobs: readonly ExpiredJob[]) {
  return sql`unnest(${jobs.map((job) => job.merchantId)}::uuid[], ${jobs.map((job) => job.id)}::uuid[])`;
}

/**
 * Up to `limit` rows of these jobs in `table`: their rewards lists (`job_rewards`), slices not yet listed
 * (`job_cancel_slices`) or identifiers they did not cancel (`job_unapplied_identifiers`). Each table is
 * keyed by `(merchant_id, job_id, …)`, so every job's rows are one index range.
 */
export async function deleteJobRowsOf(
  db: Executor,
  table: PerJobTable,
  jobs: readonly ExpiredJob[],
  limit: number,
): Promise<number> {
  return affected(
    await sql`
      DELETE FROM ${sql.table(table)}
      WHERE ctid = ANY(ARRAY(
        SELECT r.ctid FROM ${jobColumns(jobs)} AS j (merchant_id, id)
        CROSS JOIN LATERAL (
          SELECT ctid FROM ${sql.table(table)} WHERE merchant_id = j.merchant_id AND job_id = j.id
        ) AS r
        LIMIT ${limit}
      ))
    `.execute(db),
  );
}

/**
 * The audit rows of these jobs, checked again: a row that was taken up again since it was picked
 * (a job run once more, which writes `running`) stays.
 */
export async function deleteJobs(db: Executor, jobs: readonly ExpiredJob[], cutoff: Date): Promise<number> {
  return affected(
    await sql`
      DELETE FROM cancellation_jobs c
      USING ${jobColumns(jobs)} AS j (merchant_id, id)
      WHERE c.merchant_id = j.merchant_id AND c.id = j.id AND c.finished_at < ${cutoff} AND c.${FINISHED}
    `.execute(db),
  );
}

/**
 * Up to `limit` webhook deliveries created before `cutoff`. One still `pending` (its retries run for
 * about 17.5 h) stays until it has settled, or until it is older than `abandonedBefore`: a pending
 * row that old has lost its delivery job (a Redis flushed or restored from an old copy).
 */
export async function deleteWebhookDeliveries(
  db: Executor,
  cutoff: Date,
  abandonedBefore: Date,
  limit: number,
): Promise<number> {
  return affected(
    await sql`
      DELETE FROM webhook_deliveries
      WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM webhook_deliveries
        WHERE created_at < ${cutoff} AND (state <> 'pending' OR created_at < ${abandonedBefore})
        ORDER BY created_at
        LIMIT ${limit}
      ))
    `.execute(db),
  );
}

/** Up to `limit` admin audit entries written before `cutoff`, oldest first (admin_audit_log_created_at_idx). */
export async function deleteAdminAuditEntries(db: Executor, cutoff: Date, limit: number): Promise<number> {
  return affected(
    await sql`
      DELETE FROM admin_audit_log
      WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM admin_audit_log WHERE created_at < ${cutoff} ORDER BY created_at LIMIT ${limit}
      ))
    `.execute(db),
  );
}

/** Sessions whose expiry passed before `cutoff`, oldest first. A session without expiry never expires. */
export async function expiredSessionIds(db: Executor, cutoff: Date, limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM sessions WHERE expires_at < ${cutoff} ORDER BY expires_at LIMIT ${limit}
  `.execute(db);
  return rows.map((row) => row.id);
}

/**
 * Up to `limit` bet slip items of these sessions. Deleted ahead of their sessions, in bounded
 * statements, rather than by the foreign key's cascade, which would remove every item of a batch of
 * sessions in one statement.
 */
export async function deleteBetSlipItemsOf(
  db: Executor,
  sessionIds: readonly string[],
  limit: number,
): Promise<number> {
  return affected(
    await sql`
      DELETE FROM bet_slip_items
      WHERE ctid = ANY(ARRAY(
        SELECT b.ctid FROM unnest(${sessionIds}::uuid[]) AS s (id)
        CROSS JOIN LATERAL (SELECT ctid FROM bet_slip_items WHERE session_id = s.id) AS b
        LIMIT ${limit}
      ))
    `.execute(db),
  );
}

/** These sessions, their expiry checked again (an admin may have created one anew under the same id). */
export async function deleteSessions(db: Executor, sessionIds: readonly string[], cutoff: Date): Promise<number> {
  return affected(
    await sql`DELETE FROM sessions WHERE id = ANY(${sessionIds}::uuid[]) AND expires_at < ${cutoff}`.execute(db),
  );
}
