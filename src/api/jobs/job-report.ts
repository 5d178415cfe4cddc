import type { Db } from '../../shared/db/client.js';
import { AppError, RETRY_SOON_SECONDS } from '../../shared/errors/errors.js';
import type { ApiDeps } from '../context.js';
import { hasFinished, type ListedJob } from './job-listing-page.js';
import { type ListedRowCursor, readCancelledReportBatch, readUnappliedReportBatch } from './job-report.repository.js';
import type { UnappliedCursor } from './job-unapplied.repository.js';
import type { ReportText } from './ndjson-report-stream.js';

/**
 * Lines read per statement. Small enough that a report holds a few hundred kilobytes at a time whatever
 * its length (the stream reads the next batch only when the client has taken this one); large enough
 * that a 1,000,000-line report is a few hundred short statements, each a range read of its listing's key.
 */
const REPORT_BATCH = 2_000;

/**
 * Every line of a finished job's report, a batch of NDJSON text at a time: the rewards it cancelled (from its listing,
 * `job_rewards`, row by row in key order: ids ascend within a row, not across the job), then, for a
 * bulkCancel, the identifiers it did not cancel (`job_unapplied_identifiers`, in key order). Each batch is its own short read, so no connection is
 * held while the client reads; a replica serves a batch only once it has replayed the job's end
 * (recorded after the job's last rows), else the primary does, as for jobs/rewards pages.
 */
export async function* reportBatches(
  deps: Pick<ApiDeps, 'reads'>,
  job: ListedJob,
  operation: 'bulkCancel' | 'bulkCancelByQuery',
): AsyncGenerator<ReportText> {
  let after: ListedRowCursor | null | undefined;
  do {
    const batch = await readFinishedJob(deps, job, (db) =>
      readCancelledReportBatch(db, { ...job, after: after ?? undefined, limit: REPORT_BATCH }),
    );
    yield batch;
    after = batch.next;
  } while (after !== null);
  // Query jobs name players, not rewards: what they did not cancel has no identifier to report.
  if (operation !== 'bulkCancel') return;
  let unappliedAfter: UnappliedCursor | null | undefined;
  do {
    const batch = await readFinishedJob(deps, job, (db) =>
      readUnappliedReportBatch(db, { ...job, after: unappliedAfter ?? undefined, limit: REPORT_BATCH }),
    );
    yield batch;
    unappliedAfter = batch.next;
  } while (unappliedAfter !== null);
}

/** One read of a finished job's rows, from a pool that has them all. */
export async function readFinishedJob<T>(
  { reads }: Pick<ApiDeps, 'reads'>,
  job: ListedJob,
  read: (db: Db) => Promise<T>,
): Promise<T> {
  const answer = await reads.read(
    'jobReport',
    async (db, pool): Promise<{ value: T } | undefined> => {
      if (pool === 'replica' && !(await hasFinished(db, job))) return undefined;
      return { value: await read(db) };
    },
    { accept: (result) => result !== undefined },
  );
  if (answer === undefined)
    throw new AppError('SERVICE_UNAVAILABLE', undefined, { retryAfterSeconds: RETRY_SOON_SECONDS });
  return answer.value;
}
