import { createRoute, type RouteConfigToTypedResponse, z } from '@hono/zod-openapi';
import { AppError } from '../../shared/errors.js';
import { isFinished } from '../../shared/jobs/public-status.js';
import { hasDeferredSlices } from '../../shared/repositories/job-rewards.repository.js';
import type { App } from '../context.js';
import { readFinishedJob, reportBatches } from '../jobs/job-report.js';
import { findJobStatus, finishedJobRecords } from '../jobs/job-status.js';
import { acceptsGzip, ndjsonReportStream } from '../jobs/ndjson-report-stream.js';
import type { MerchantRouteMiddleware } from '../middleware/merchant-auth.middleware.js';
import { errorResponse, jsonBody, merchantErrorResponses, signedFields } from '../schemas.js';

const JobReportRequestSchema = z
  .object({
    ...signedFields,
    jobId: z.string().min(1).max(128).openapi({ description: 'The X-Job-Id of a bulkCancel or bulkCancelByQuery' }),
  })
  .openapi('JobReportRequest');

const EXAMPLE = [
  '{"id":"30000000-0000-4000-8000-000000000001","externalId":"demo-reward-1","playerId":"demo-player-1","outcome":"cancelled"}',
  '{"id":null,"externalId":"no-such-reward","playerId":null,"outcome":"notFound"}',
  '{"summary":{"jobId":"6f1c…","operation":"bulkCancel","state":"completed","result":{"requested":2,"cancelled":1,' +
    '"alreadyCancelled":0,"notCancellable":0,"notFound":1},"lines":2,"cancelled":1,"alreadyCancelled":0,' +
    '"notCancellable":0,"notFound":1,"sha256":"…"}}',
].join('\n');

/** How long a caller waits before asking again for the report of a job still running. */
const RUNNING_RETRY_SECONDS = 5;

/**
 * `POST /api/v1/integration/jobs/report`: every outcome of a finished bulk job as one NDJSON body, for a
 * caller that reconciles a large job at once rather than page by page (jobs/rewards, jobs/unapplied).
 * Streamed a batch at a time from Postgres (ndjson-report-stream.ts), so a 1,000,000-line report costs
 * the API the same memory as a small one. While it streams it takes one of the merchant's heavy-read
 * places (heavy-read-limiter.ts), as a page of jobs/rewards does while it is read.
 */
export function registerJobReport(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: '/api/v1/integration/jobs/report',
    operationId: 'getJobReport',
    tags: ['Cancellation'],
    summary: 'Every outcome of a finished bulk job, as one NDJSON body',
    description:
      'For a finished bulkCancel or bulkCancelByQuery: one line per reward the job cancelled (`cancelled`, in ' +
      'id order), then, for a bulkCancel, one per identifier it did not cancel (`alreadyCancelled`, ' +
      '`notCancellable`, `notFound`). A line names the reward by `id` and `externalId` (a `notFound` line only ' +
      'by the identifier as sent) and its `playerId`. The last line is `{"summary":{…}}`: the job, its ' +
      '`result` counts, the lines and their counts by outcome (equal to the result for a job that ran to ' +
      'its end), and `sha256`, the hex SHA-256 of every byte before the summary line. A body without a ' +
      'summary line is incomplete. Sent gzip-encoded when Accept-Encoding allows gzip; the checksum is over ' +
      'the decoded bytes. A job still running answers 409 with Retry-After; a single cancel answers 400 ' +
      '(its status states its outcome).',
    middleware: auth,
    request: { body: jsonBody(JobReportRequestSchema) },
    responses: {
      200: {
        description: 'The report: NDJSON, one JSON object per line, the last the summary',
        headers: {
          'Content-Encoding': { description: '`gzip` when the request allowed it', schema: { type: 'string' } },
        },
        content: { 'application/x-ndjson': { schema: z.string().openapi({ example: EXAMPLE }) } },
      },
      404: errorResponse('NOT_FOUND (10): no such job for this merchant'),
      409: errorResponse(
        'CONFLICT (13): the job has not finished, or its rewards are still being listed; see Retry-After',
      ),
      ...merchantErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const { jobId } = c.req.valid('json');
    const deps = c.get('deps');
    const merchantId = c.get('merchant').id;
    const status = await findJobStatus(
      deps.redis,
      deps.shards,
      finishedJobRecords(deps.reads),
      jobId,
      deps.config.RETENTION_MS,
      merchantId,
    );
    // Another merchant's job is as unknown as a job that never existed.
    if (!status || status.merchantId !== merchantId) throw new AppError('NOT_FOUND', 'Job not found');
    const operation = status.operation;
    if (operation === 'cancel') {
      throw new AppError('INVALID_REQUEST', 'A report covers bulk jobs; jobs/status states the outcome of a cancel');
    }
    if (!isFinished(status.state)) {
      throw new AppError('CONFLICT', 'The job has not finished', { retryAfterSeconds: RUNNING_RETRY_SECONDS });
    }
    const job = { merchantId, jobId: status.jobId };
    if (await readFinishedJob(deps, job, (db) => hasDeferredSlices(db, job))) {
      throw new AppError('CONFLICT', "The job's rewards are still being listed", { retryAfterSeconds: 1 });
    }

    const release = await holdHeavyRead(deps.heavyReads, merchantId);
    // A client gone before the body started is never asked for bytes: give the place back all the same.
    c.req.raw.signal.addEventListener('abort', release, { once: true });
    const logger = c.get('logger');
    const heading = { jobId: status.jobId, operation, state: status.state, result: status.result };
    const body = ndjsonReportStream({
      batches: reportBatches(deps, job, operation),
      heading,
      onEnd: (how, error) => {
        release();
        if (how === 'failed') logger.error({ err: error, jobId: job.jobId }, 'job report stopped mid-way');
      },
    });
    const gzip = acceptsGzip(c.req.header('accept-encoding'));
    c.header('Content-Type', 'application/x-ndjson');
    c.header('Vary', 'Accept-Encoding');
    c.header('Cache-Control', 'no-store');
    if (gzip) c.header('Content-Encoding', 'gzip');
    const encoded = gzip ? body.pipeThrough(new TextEncoderStream()).pipeThrough(new CompressionStream('gzip')) : body;
    // hono types a stream body as no declared response; it is the route's 200 (NDJSON text).
    return c.body(encoded, 200) as unknown as RouteConfigToTypedResponse<typeof route>;
  });
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
