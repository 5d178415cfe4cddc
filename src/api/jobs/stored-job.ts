import type { Context } from 'hono';
import type { Operation } from '../../shared/db/schema.js';
import { AppError, RETRY_SOON_SECONDS } from '../../shared/errors/errors.js';
import { findJobRecord } from '../../shared/jobs/cancellation-jobs.repository.js';
import type { AppEnv } from '../context.js';

/**
 * Whether a bulk job is stored under `jobId`: asked by a retry whose records name the id of a first
 * store with an unknown outcome (a Redis timeout during the add), before it answers that id.
 *
 * Why find-or-store rather than answering the id (which could name no job: `200`, then `404` from job
 * status) or refusing (503 until the record expires, a day): the retry carries the whole request, so
 * it can settle the outcome itself. Redis holds the job while it waits, runs and for a while after
 * (job-catalogue.ts); Postgres holds its audit row from its start on, after Redis has let it go. Found
 * in either: the job was stored, and is answered. Found in neither: it was not, and the retry stores it
 * now under the same id; a first store that still lands later is the same job id, which BullMQ keeps
 * once. (Only a first store delayed past the job's whole life in Redis, its run and an hour after, could
 * add it again: a command stuck in a stalled link is delivered, or dropped with the connection, within
 * TCP's retransmission limit, about 15 minutes on Linux; after a broken link the producer's connection
 * resends it at most once, at once, or gives it up.) Either store down: 503 (errorCode 11), and the record stays as it is for
 * the next retry.
 */
export async function isJobStored(c: Context<AppEnv>, name: Operation, jobId: string): Promise<boolean> {
  const { producer, db } = c.get('deps');
  const merchantId = c.get('merchant').id;
  if (await producer.holdsJob(name, merchantId, jobId)) return true;
  try {
    return (await findJobRecord(db, merchantId, jobId)) !== undefined;
  } catch (error) {
    throw new AppError('SERVICE_UNAVAILABLE', undefined, {
      retryAfterSeconds: RETRY_SOON_SECONDS,
      logDetail: 'postgres',
      cause: error,
    });
  }
}
