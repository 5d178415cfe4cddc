import { sql } from 'kysely';
import type { Db } from '../../shared/db/client.js';
import type { UnappliedCursor } from './job-unapplied.repository.js';

export type ReportOutcome = 'cancelled' | 'alreadyCancelled' | 'notCancellable' | 'notFound';
export type ReportCounts = Record<ReportOutcome, number>;

/**
 * Lines per string handed to the API: a string of at most a few tens of kilobytes (200 lines of at most
 * ~400 bytes) stays in V8's young generation and dies there; one of several hundred kilobytes would go to
 * its large-object space, which only a full collection frees, and a report's worth of them grew the API
 * process by tens of MiB before one ran (measured with bench/job-report-memory.ts).
 */
const LINES_PER_TEXT = 200;

/**
 * A run of report lines as NDJSON text, written by Postgres (`row_to_json`, compact): each line is
 * `{"id","externalId","playerId","outcome"}`, the reward by both its names when it exists (a caller may
 * have named it by either), else only the identifier the request gave, in the field of its kind. A few
 * strings per batch rather than an object per line: the API allocates little for a report of any length.
 */
export interface ReportBatch<Cursor> {
  /** The batch's lines in order, a few hundred per string (LINES_PER_TEXT). */
  texts: string[];
  counts: ReportCounts;
  /** Where the next batch starts; null when this one was the last. */
  next: Cursor | null;
}

/** Where the next batch of cancelled rewards starts: just after this `job_rewards` row. */
export interface ListedRowCursor {
  bucket: number;
  firstId: string;
}

/**
 * One batch of the rewards a job cancelled, read from its listing (`job_rewards`) row by row in key order
 * (bucket, first id), each row's ids in order: as many whole rows as it takes to reach `limit` ids (at
 * least one row). A range read of the key that stops where the batch ends, so every batch costs the same
 * however deep in the job it is, unlike a page in global id order (jobs/rewards), which must merge the
 * rows. Each reward is read by id, scoped to the merchant as well. No row: the listing is done.
 */
export async function readCancelledReportBatch(
  db: Db,
  params: { merchantId: string; jobId: string; after: ListedRowCursor | undefined; limit: number },
): Promise<ReportBatch<ListedRowCursor>> {
  const { merchantId, jobId, after, limit } = params;
  const start = after ? sql`AND (bucket, first_id) > (${after.bucket}, ${after.firstId}::uuid)` : sql``;
  const { rows } = await sql<{ bucket: number; firstId: string; text: string | null; lines: number }>`
    WITH listed AS MATERIALIZED (
      SELECT bucket, first_id, reward_ids
      FROM (
        SELECT bucket, first_id, reward_ids,
          sum(cardinality(reward_ids)) OVER (ORDER BY bucket, first_id) - cardinality(reward_ids) AS before
        FROM (
          SELECT bucket, first_id, reward_ids FROM job_rewards
          WHERE merchant_id = ${merchantId}::uuid AND job_id = ${jobId}::uuid ${start}
          ORDER BY bucket, first_id
          LIMIT ${limit}
        ) next_rows
      ) counted
      WHERE before < ${limit}
    ),
    lines AS MATERIALIZED (
      SELECT l.bucket, l.first_id, ids.ordinality,
        row_to_json(line)::text AS line
      FROM listed l
      CROSS JOIN LATERAL unnest(l.reward_ids) WITH ORDINALITY AS ids(id, ordinality)
      JOIN rewards r ON r.merchant_id = ${merchantId}::uuid AND r.id = ids.id
      CROSS JOIN LATERAL (
        SELECT r.id, r.external_id AS "externalId", r.player_id AS "playerId", 'cancelled' AS outcome
      ) line
    )
    SELECT last.bucket, last.first_id::text AS "firstId", part.text, (SELECT count(*) FROM lines)::int AS lines
    FROM (SELECT bucket, first_id FROM listed ORDER BY bucket DESC, first_id DESC LIMIT 1) last
    LEFT JOIN LATERAL (
      SELECT (n - 1) / ${LINES_PER_TEXT} AS part, string_agg(line || E'\\n', '' ORDER BY n) AS text
      FROM (SELECT line, row_number() OVER (ORDER BY bucket, first_id, ordinality) AS n FROM lines) numbered
      GROUP BY 1
    ) part ON true
    ORDER BY part.part
  `.execute(db);
  const row = rows[0];
  if (!row) return { texts: [], counts: countsOf({}), next: null };
  return {
    texts: textsOf(rows),
    counts: countsOf({ cancelled: row.lines }),
    next: { bucket: row.bucket, firstId: row.firstId },
  };
}

/**
 * One keyset batch of the identifiers a by-id job did not cancel (job_unapplied_identifiers, in key
 * order, as jobs/unapplied pages them), each with the reward it named, if any (the one of its kind: an
 * index probe per identifier on the merchant's partition).
 */
export async function readUnappliedReportBatch(
  db: Db,
  params: { merchantId: string; jobId: string; after: UnappliedCursor | undefined; limit: number },
): Promise<ReportBatch<UnappliedCursor>> {
  const { merchantId, jobId, after, limit } = params;
  const start = after ? sql`AND (kind, identifier) > (${after.kind}, ${after.identifier})` : sql``;
  const { rows } = await sql<
    { kind: UnappliedCursor['kind']; identifier: string; text: string | null } & Omit<ReportCounts, 'cancelled'>
  >`
    WITH unapplied AS MATERIALIZED (
      SELECT kind, identifier, outcome FROM job_unapplied_identifiers
      WHERE merchant_id = ${merchantId}::uuid AND job_id = ${jobId}::uuid ${start}
      ORDER BY kind, identifier
      LIMIT ${limit}
    ),
    lines AS MATERIALIZED (
      SELECT u.kind, u.identifier, u.outcome, row_to_json(line)::text AS line
      FROM unapplied u
      LEFT JOIN rewards ri ON u.kind = 'id' AND u.outcome <> 'notFound' AND ri.merchant_id = ${merchantId}::uuid
        AND ri.id = (CASE WHEN u.kind = 'id' THEN u.identifier END)::uuid
      LEFT JOIN rewards re ON u.kind = 'externalId' AND u.outcome <> 'notFound'
        AND re.merchant_id = ${merchantId}::uuid AND re.external_id = u.identifier
      CROSS JOIN LATERAL (
        SELECT CASE WHEN u.kind = 'id' THEN u.identifier ELSE re.id::text END AS id,
          CASE WHEN u.kind = 'externalId' THEN u.identifier ELSE ri.external_id END AS "externalId",
          coalesce(ri.player_id, re.player_id) AS "playerId",
          u.outcome
      ) line
    )
    SELECT last.kind, last.identifier, part.text,
      (SELECT count(*) FROM lines WHERE outcome = 'alreadyCancelled')::int AS "alreadyCancelled",
      (SELECT count(*) FROM lines WHERE outcome = 'notCancellable')::int AS "notCancellable",
      (SELECT count(*) FROM lines WHERE outcome = 'notFound')::int AS "notFound"
    FROM (SELECT kind, identifier FROM unapplied ORDER BY kind DESC, identifier DESC LIMIT 1) last
    LEFT JOIN LATERAL (
      SELECT (n - 1) / ${LINES_PER_TEXT} AS part, string_agg(line || E'\\n', '' ORDER BY n) AS text
      FROM (SELECT line, row_number() OVER (ORDER BY kind, identifier) AS n FROM lines) numbered
      GROUP BY 1
    ) part ON true
    ORDER BY part.part
  `.execute(db);
  const row = rows[0];
  if (!row) return { texts: [], counts: countsOf({}), next: null };
  const { kind, identifier, text: _text, ...counts } = row;
  return { texts: textsOf(rows), counts: countsOf(counts), next: { kind, identifier } };
}

function textsOf(rows: readonly { text: string | null }[]): string[] {
  return rows.flatMap((row) => (row.text === null ? [] : [row.text]));
}

function countsOf(counts: Partial<ReportCounts>): ReportCounts {
  return { cancelled: 0, alreadyCancelled: 0, notCancellable: 0, notFound: 0, ...counts };
}
