import { sql } from 'kysely';
import type { Db } from '../../shared/db/client.js';
import type { CancellationJobRow, JobState, Operation } from '../../shared/db/schema.js';

export interface MerchantJobsQuery {
  merchantId: string;
  states: readonly JobState[] | undefined;
  operations: readonly Operation[] | undefined;
  /** The id of the last job of the previous page: the page goes on after it, newest first. */
  after: string | undefined;
  /** Jobs that finished before this are past retention: as unknown as in job status. */
  finishedAfter: Date;
  limit: number;
}

/**
 * One page of a merchant's jobs from their audit rows, newest first (created_at, then id, both
 * descending), on the index (merchant_id, created_at DESC). The cursor is a job id: its row gives the
 * place to go on from, so the cursor stays exact whatever the clock's resolution. One row more than
 * the page is read, to know whether another page follows.
 */
export async function listMerchantJobs(db: Db, query: MerchantJobsQuery): Promise<CancellationJobRow[]> {
  let select = db
    .selectFrom('cancellation_jobs')
    .selectAll()
    .where('merchant_id', '=', query.merchantId)
    .where((eb) => eb.or([eb('finished_at', 'is', null), eb('finished_at', '>', query.finishedAfter)]));
  // Enum columns compared as text, so that the lists go in as one text[] parameter each.
  if (query.states) select = select.where(sql<boolean>`state::text = ANY(${sql.val(query.states)}::text[])`);
  if (query.operations) {
    select = select.where(sql<boolean>`operation::text = ANY(${sql.val(query.operations)}::text[])`);
  }
  if (query.after !== undefined) {
    select = select.where(
      sql<boolean>`(created_at, id) < (SELECT c.created_at, c.id FROM cancellation_jobs c
        WHERE c.merchant_id = ${query.merchantId} AND c.id = ${query.after})`,
    );
  }
  return select
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
}
