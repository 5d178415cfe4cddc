import type pg from 'pg';

/** The tables the service writes for itself per cancel (docs/design.md "What each table keeps per cancel"). */
const BOOKKEEPING_TABLES = [
  'cancellation_jobs',
  'job_rewards',
  'job_cancel_slices',
  'job_unapplied_identifiers',
] as const;

export interface BookkeepingSize {
  /** pg_total_relation_size of the bookkeeping tables together (heap, TOAST, indexes). */
  bytes: number;
  /** webhook_deliveries apart: one row per finished job, and only for merchants with a webhook. */
  webhookBytes: number;
}

export async function bookkeepingSize(db: pg.Pool): Promise<BookkeepingSize> {
  const { rows } = await db.query<{ bytes: string; webhook_bytes: string }>(
    `SELECT (SELECT sum(pg_total_relation_size(t::regclass)) FROM unnest($1::text[]) AS t)::text AS bytes,
            pg_total_relation_size('webhook_deliveries')::text AS webhook_bytes`,
    [BOOKKEEPING_TABLES],
  );
  return { bytes: Number(rows[0]?.bytes ?? 0), webhookBytes: Number(rows[0]?.webhook_bytes ?? 0) };
}

/** Bytes added between two sizes, per cancel (or per reward). */
export function bytesPer(before: BookkeepingSize, after: BookkeepingSize, count: number) {
  const per = (bytes: number) => (count > 0 ? Math.round((bytes / count) * 10) / 10 : null);
  return { bytes: per(after.bytes - before.bytes), webhookBytes: per(after.webhookBytes - before.webhookBytes) };
}
