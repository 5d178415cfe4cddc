import { sql, type Transaction } from 'kysely';
import type { Executor } from '../../shared/db/client.js';
import type { Database } from '../../shared/db/schema.js';
import { listCancelledRewardsOfJob } from '../../shared/jobs/job-rewards.repository.js';
import { lockThenCancel } from './lock-then-cancel.js';

/** Cancels of lists of ids (bulkCancel), under the lock order of reward-cancellations.repository.ts. */
export interface IdentifierBatchResult {
  cancelled: number;
  alreadyCancelled: number;
  notCancellable: number;
  notFound: number;
}

/**
 * One batch of a bulkCancel: rewards of one merchant selected by id or by external id. Each reward is
 * counted once even when both lists name it; `excludeIds` lets an external-id batch skip rewards that
 * the request also names by id (they are counted in the id batches).
 */
export async function cancelRewardsByIdentifiers(
  db: Transaction<Database>,
  params: {
    jobId: string;
    merchantId: string;
    ids: readonly string[];
    externalIds: readonly string[];
    excludeIds?: readonly string[];
  },
): Promise<IdentifierBatchResult> {
  const { jobId, merchantId, ids, externalIds } = params;
  const excludeIds = params.excludeIds ?? [];
  const result = await sql<IdentifierBatchResult>`
    WITH matched AS (
      SELECT r.id, r.status, r.cancellation_job_id, r.external_id, r.ctid AS address
      FROM rewards r
      WHERE r.merchant_id = ${merchantId}
        AND (r.id = ANY(${ids}::uuid[]) OR r.external_id = ANY(${externalIds}::text[]))
        AND NOT (r.id = ANY(${excludeIds}::uuid[]))
    ),
    ${lockThenCancel({
      jobId,
      merchantId,
      rows: sql`r.merchant_id = ${merchantId}
        AND r.ctid = ANY(ARRAY(SELECT address FROM matched WHERE status = 'ACTIVE')) AND r.status = 'ACTIVE'`,
    })},
    ${listCancelledRewardsOfJob(merchantId, jobId)}
    SELECT
      (SELECT count(*) FROM updated)::int
        + (SELECT count(*) FROM matched WHERE status = 'CANCELLED' AND cancellation_job_id = ${jobId})::int AS cancelled,
      (SELECT count(*) FROM matched m
        WHERE NOT EXISTS (SELECT 1 FROM updated u WHERE u.id = m.id)
          AND (m.status = 'ACTIVE' OR (m.status = 'CANCELLED' AND m.cancellation_job_id IS DISTINCT FROM ${jobId})))::int
        AS "alreadyCancelled",
      (SELECT count(*) FROM matched WHERE status IN ('USED', 'EXPIRED'))::int AS "notCancellable",
      0 AS "notFound"
  `.execute(db);
  const row = result.rows[0] ?? { cancelled: 0, alreadyCancelled: 0, notCancellable: 0, notFound: 0 };
  const notFound = await recordUnappliedIdentifiers(db, { jobId, merchantId, ids, externalIds, excludeIds });
  return { ...row, notFound };
}

/**
 * External ids of the list whose reward the request also names by id. A split bulkCancel leaves them
 * out of its external-id parts (their reward is counted by the id parts), so that each reward counts
 * once without every part carrying the request's ids.
 */
export async function findExternalIdsNamedById(
  db: Executor,
  params: { merchantId: string; ids: readonly string[]; externalIds: readonly string[] },
): Promise<string[]> {
  if (params.ids.length === 0 || params.externalIds.length === 0) return [];
  const result = await sql<{ externalId: string }>`
    SELECT DISTINCT r.external_id AS "externalId" FROM rewards r
    WHERE r.merchant_id = ${params.merchantId}
      AND r.id = ANY(${params.ids}::uuid[])
      AND r.external_id = ANY(${params.externalIds}::text[])
  `.execute(db);
  return result.rows.map((row) => row.externalId);
}

/**
 * Records the batch's identifiers that it did not cancel, each with why (`job_unapplied_identifiers`,
 * read by `jobs/unapplied`), and returns how many named no reward of the merchant. Runs in the batch's
 * transaction after its cancel statement, so it sees the rewards as the batch left them: one this job
 * cancelled (in this attempt or an earlier one) is applied and gets no row. A retried batch writes the
 * same rows again. External ids whose reward the request also names by id (`excludeIds`) are left to
 * the id batches, as the counts do.
 */
async function recordUnappliedIdentifiers(
  db: Executor,
  params: {
    jobId: string;
    merchantId: string;
    ids: readonly string[];
    externalIds: readonly string[];
    excludeIds: readonly string[];
  },
): Promise<number> {
  const { jobId, merchantId, ids, externalIds, excludeIds } = params;
  const result = await sql<{ notFound: number }>`
    WITH named AS (
      SELECT 'id' AS kind, i.id::text AS identifier, r.id AS reward_id, r.status, r.cancellation_job_id
      FROM unnest(${ids}::uuid[]) AS i(id)
      LEFT JOIN rewards r ON r.merchant_id = ${merchantId} AND r.id = i.id
      UNION ALL
      SELECT 'externalId', e.external_id, r.id, r.status, r.cancellation_job_id
      FROM unnest(${externalIds}::text[]) AS e(external_id)
      LEFT JOIN rewards r ON r.merchant_id = ${merchantId} AND r.external_id = e.external_id
    ),
    judged AS (
      SELECT kind, identifier,
        CASE
          WHEN reward_id IS NULL THEN 'notFound'
          WHEN status IN ('USED', 'EXPIRED') THEN 'notCancellable'
          WHEN status = 'CANCELLED' AND cancellation_job_id IS DISTINCT FROM ${jobId}::uuid THEN 'alreadyCancelled'
        END AS outcome
      FROM named
      WHERE reward_id IS NULL OR NOT (reward_id = ANY(${excludeIds}::uuid[]))
    ),
    recorded AS (
      INSERT INTO job_unapplied_identifiers (merchant_id, job_id, kind, identifier, outcome)
      SELECT DISTINCT ${merchantId}::uuid, ${jobId}::uuid, kind, identifier, outcome FROM judged
      WHERE outcome IS NOT NULL
      ON CONFLICT (merchant_id, job_id, kind, identifier) DO UPDATE SET outcome = EXCLUDED.outcome
    )
    SELECT (count(*) FILTER (WHERE outcome = 'notFound'))::int AS "notFound" FROM judged
  `.execute(db);
  return result.rows[0]?.notFound ?? 0;
}
