import { createRoute, type RouteConfigToTypedResponse, z } from '@hono/zod-openapi';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App } from '../context.js';
import { errorResponse, jsonBody, merchantErrorResponses, signedFields } from '../http/schemas.js';
import { openJobReport } from './job-report-download.js';
import { acceptsGzip, encodedReport } from './ndjson-report-stream.js';

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

/**
 * `POST /api/v1/integration/jobs/report`: every outcome of a finished bulk job as one NDJSON body, for a
 * caller that reconciles a large job at once rather than page by page (jobs/rewards, jobs/unapplied).
 * Streamed a batch at a time from Postgres (ndjson-report-stream.ts), so a 1,000,000-line report costs
 * the API the same memory as a small one. While it streams it takes one of the merchant's heavy-read
 * places (heavy-read-limiter.ts, jobs/job-report-download.ts), as a page of jobs/rewards does.
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
    const report = await openJobReport(c.get('deps'), c.get('merchant').id, jobId, {
      signal: c.req.raw.signal,
      logger: c.get('logger'),
    });
    const gzip = acceptsGzip(c.req.header('accept-encoding'));
    c.header('Content-Type', 'application/x-ndjson');
    c.header('Vary', 'Accept-Encoding');
    c.header('Cache-Control', 'no-store');
    if (gzip) c.header('Content-Encoding', 'gzip');
    const encoded = encodedReport(report.body, gzip);
    // hono types a stream body as no declared response; it is the route's 200 (NDJSON text).
    return c.body(encoded, 200) as unknown as RouteConfigToTypedResponse<typeof route>;
  });
}
