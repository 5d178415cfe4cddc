import { sql } from 'kysely';
import type { Db } from '../../shared/db/client.js';
import type { UnappliedCursor } from './job-unapplied.repository.js';

export type ReportOutcome = 'cancelled' | 'alreadyCancelled' | 'notCancellable' | 'notFound';

/**
 * One line of a job's report: the reward by both its names when it exists (a caller may have named it
 * by either), else only the identifier the request gave, in the field of its kind.
 */
export interface ReportLine {
  id: string | null;
  externalId: string | null;
  playerId: string | null;
  outcome: ReportOutcome;
}

/** Where the next batch of cancelled rewards starts: just after this `job_rewards` row. */
export interface ListedRowCursor {
  bucket: number;
  firstId: string;
}

export interface CancelledReportBatch {
  lines: ReportLine[];
  /** The key of the batch's last row when more may follow. */
  next: ListedRowCursor | null;
}

/**
 * One batch of the rewards a job cancelled, read from its listing (`job_rewards`) row by row in key order
 * (bucket, first id), each row's ids in order: as many whole rows as it takes to reach `limit` ids (at
 * least one row). A range read of the key that stops where the batch ends, so every batch costs the same
 * however deep in the job it is, unlike a page in global id order (jobs/rewards), which must merge the
 * rows. Each reward is read by id, scoped to the merchant as well.
 */
export async function readCancelledReportBatch(
  db: Db,
  params: { merchantId: string; jobId: string; after: ListedRowCursor | undefined; limit: number },
): Promise<CancelledReportBatch> {
  const { merchantId, jobId, after, limit } = params;
  const start = after ? sql`AND (bucket, first_id) > (${after.bucket}, ${after.firstId}::uuid)` : sql``;
  const { rows } = await sql<{
    bucket: number;
    firstId: string;
    id: string;
    externalId: string | null;
    playerId: string;
  }>`
    WITH listed AS (
      SELECT bucket, first_id, reward_ids,
        sum(cardinality(reward_ids)) OVER (ORDER BY bucket, first_id) - cardinality(reward_ids) AS before
      FROM (
        SELECT bucket, first_id, reward_ids FROM job_rewards
        WHERE merchant_id = ${merchantId}::uuid AND job_id = ${jobId}::uuid ${start}
        ORDER BY bucket, first_id
        LIMIT ${limit}
      ) next_rows
    )
    SELECT l.bucket, l.first_id::text AS "firstId", r.id, r.external_id AS "externalId", r.player_id AS "playerId"
    FROM listed l
    CROSS JOIN LATERAL unnest(l.reward_ids) WITH ORDINALITY AS ids(id, ordinality)
    JOIN rewards r ON r.merchant_id = ${merchantId}::uuid AND r.id = ids.id
    WHERE l.before < ${limit}
    ORDER BY l.bucket, l.first_id, ids.ordinality
  `.execute(db);
  const last = rows.at(-1);
  return {
    lines: rows.map(({ id, externalId, playerId }) => ({ id, externalId, playerId, outcome: 'cancelled' as const })),
    next: last ? { bucket: last.bucket, firstId: last.firstId } : null,
  };
}

export interface UnappliedReportBatch {
  lines: ReportLine[];
  /** The key of the batch's last entry when more may follow. */
  next: UnappliedCursor | null;
}

/**
 * One keyset batch of the identifiers a by-id job did not cancel (job_unapplied_identifiers, in key
 * order, as jobs/unapplied pages them), each with the reward it named, if any (the one of its kind: an index probe per
 * identifier on the merchant's partition), so a batch costs the same however deep in the job it is.
 */
export async function readUnappliedReportBatch(
  db: Db,
  params: { merchantId: string; jobId: string; after: UnappliedCursor | undefined; limit: number },
): Promise<UnappliedReportBatch> {
  const { merchantId, jobId, after, limit } = params;
  const start = after ? sql`AND (kind, identifier) > (${after.kind}, ${after.identifier})` : sql``;
  const { rows } = await sql<ReportLine & UnappliedCursor>`
    SELECT u.kind, u.identifier, u.outcome,
      CASE WHEN u.kind = 'id' THEN u.identifier ELSE re.id::text END AS id,
      CASE WHEN u.kind = 'externalId' THEN u.identifier ELSE ri.external_id END AS "externalId",
      coalesce(ri.player_id, re.player_id) AS "playerId"
    FROM (
      SELECT kind, identifier, outcome FROM job_unapplied_identifiers
      WHERE merchant_id = ${merchantId}::uuid AND job_id = ${jobId}::uuid ${start}
      ORDER BY kind, identifier
      LIMIT ${limit}
    ) u
    LEFT JOIN rewards ri ON u.kind = 'id' AND u.outcome <> 'notFound' AND ri.merchant_id = ${merchantId}::uuid
      AND ri.id = (CASE WHEN u.kind = 'id' THEN u.identifier END)::uuid
    LEFT JOIN rewards re ON u.kind = 'externalId' AND u.outcome <> 'notFound' AND re.merchant_id = ${merchantId}::uuid
      AND re.external_id = u.identifier
    ORDER BY u.kind, u.identifier
  `.execute(db);
  const last = rows.at(-1);
  const lines = rows.map(({ id, externalId, playerId, outcome }) => ({ id, externalId, playerId, outcome }));
  return { lines, next: rows.length === limit && last ? { kind: last.kind, identifier: last.identifier } : null };
}
