import { AppError, RETRY_SOON_SECONDS } from '../../shared/errors/errors.js';
import { hasDeferredSlices } from '../../shared/jobs/job-rewards.repository.js';
import { isFinished } from '../../shared/jobs/public-status.js';
import type { ApiDeps } from '../context.js';
import type { RequestLog } from '../http/request-logger.js';
import { readFinishedJob, reportBatches } from './job-report.js';
import { requireMerchantJob } from './merchant-job.js';
import { ndjsonReportStream } from './ndjson-report-stream.js';

/** How long a caller waits before asking again for the report of a job still running: a bulk job runs for seconds at least. */
const RUNNING_RETRY_SECONDS = 5;

/**
 * The NDJSON report of one of the merchant's finished bulk jobs, for the signed API (jobs/report) and
 * the portal's download alike: 404 for a job not the merchant's, 400 for a single cancel, 409 (with
 * Retry-After) while the job runs or its rewards are still being listed. While the body streams it holds
 * one of the merchant's heavy-read places, given back when the stream ends or `signal` aborts.
 */
export async function openJobReport(
  deps: ApiDeps,
  merchantId: string,
  jobId: string,
  request: { signal: AbortSignal; logger: RequestLog },
): Promise<{ body: ReadableStream<string>; jobId: string }> {
  const status = await requireMerchantJob(deps, merchantId, jobId);
  const operation = status.operation;
  if (operation === 'cancel') {
    throw new AppError('INVALID_REQUEST', 'A report covers bulk jobs; jobs/status states the outcome of a cancel');
  }
  if (!isFinished(status.state)) {
    throw new AppError('CONFLICT', 'The job has not finished', { retryAfterSeconds: RUNNING_RETRY_SECONDS });
  }
  const job = { merchantId, jobId: status.jobId };
  if (await readFinishedJob(deps, job, (db) => hasDeferredSlices(db, job))) {
    throw new AppError('CONFLICT', "The job's rewards are still being listed", {
      retryAfterSeconds: RETRY_SOON_SECONDS,
    });
  }

  const release = await holdHeavyRead(deps.heavyReads, merchantId);
  // A client gone before the body started is never asked for bytes: give the place back all the same.
  request.signal.addEventListener('abort', release, { once: true });
  const heading = { jobId: status.jobId, operation, state: status.state, result: status.result };
  const body = ndjsonReportStream({
    batches: reportBatches(deps, job, operation),
    heading,
    onEnd: (how, error) => {
      release();
      if (how === 'failed') request.logger.error({ err: error, jobId: job.jobId }, 'job report stopped mid-way');
    },
  });
  return { body, jobId: status.jobId };
}

/**
 * Takes one of the merchant's heavy-read places for as long as the report streams (429 now if none is
 * free), and returns what gives it back.
 */
function holdHeavyRead(
  limiter: { run<T>(merchantId: string, read: () => Promise<T>): Promise<T> },
  merchantId: string,
): Promise<() => void> {
  return new Promise((resolve, reject) => {
    let release: () => void = () => undefined;
    const streaming = new Promise<void>((done) => {
      release = done;
    });
    limiter
      .run(merchantId, () => {
        resolve(release);
        return streaming;
      })
      .catch(reject);
  });
}
