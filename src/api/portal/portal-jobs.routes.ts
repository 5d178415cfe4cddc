import { z } from '@hono/zod-openapi';
import { operations } from '../../shared/db/schema.js';
import { AppError } from '../../shared/errors/errors.js';
import { toPublicStatus } from '../../shared/jobs/public-status.js';
import { IDENTIFIER_MAX_LENGTH, jobIdSchema, uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { abortMerchantJob } from '../jobs/abort-job.js';
import { jobEventsResponse } from '../jobs/events/job-events-response.js';
import { JOB_PAGE_MAX, jobRewardsPage, jobUnappliedPage } from '../jobs/job-pages.js';
import { openJobReport } from '../jobs/job-report-download.js';
import { LIST_JOBS_MAX_PAGE, listedStates, listJobsPage } from '../jobs/list-jobs.js';
import { requireMerchantJob } from '../jobs/merchant-job.js';
import { acceptsGzip, encodedReport } from '../jobs/ndjson-report-stream.js';
import { auditPortalAction } from './portal-audit.js';
import { listOf, pageLimit, portalQuery } from './portal-query.js';
import { portalSession } from './portal-session.middleware.js';

/** The portal's page sizes: what a screen shows, well under the signed API's bounds. */
const PORTAL_PAGE_MAX = 200;

const JobsQuery = z.object({
  state: listOf(z.enum(listedStates)).optional(),
  kind: listOf(z.enum(operations)).optional(),
  after: uuidSchema().optional(),
  limit: pageLimit(Math.min(PORTAL_PAGE_MAX, LIST_JOBS_MAX_PAGE)).optional(),
});
const RewardsQuery = z.object({
  after: uuidSchema().optional(),
  limit: pageLimit(Math.min(PORTAL_PAGE_MAX, JOB_PAGE_MAX)).optional(),
});
const UnappliedQuery = z.object({
  afterKind: z.enum(['id', 'externalId']).optional(),
  afterIdentifier: z.string().min(1).max(IDENTIFIER_MAX_LENGTH).optional(),
  limit: pageLimit(Math.min(PORTAL_PAGE_MAX, JOB_PAGE_MAX)).optional(),
});

/** The job id of the path, as the signed API checks it in its bodies. */
function jobIdOf(raw: string): string {
  const parsed = jobIdSchema().safeParse(raw);
  if (!parsed.success) throw new AppError('NOT_FOUND', 'Job not found');
  return parsed.data;
}

/**
 * The portal's job reads and the abort, each through the code the signed API runs (jobs/*), for the
 * session's merchant only: a job id of another merchant is as unknown as one that never existed (404).
 */
export function registerPortalJobRoutes(app: App): void {
  app.get('/portal/api/jobs', async (c) => {
    const query = portalQuery(c, JobsQuery);
    const page = await listJobsPage(c.get('deps'), portalSession(c).merchantId, {
      states: query.state,
      operations: query.kind,
      after: query.after,
      limit: query.limit ?? 25,
    });
    return c.json(page, 200);
  });

  app.get('/portal/api/jobs/:jobId', async (c) => {
    const status = await requireMerchantJob(c.get('deps'), portalSession(c).merchantId, jobIdOf(c.req.param('jobId')));
    return c.json(toPublicStatus(status), 200);
  });

  app.get('/portal/api/jobs/:jobId/rewards', async (c) => {
    const query = portalQuery(c, RewardsQuery);
    const page = await jobRewardsPage(c.get('deps'), portalSession(c).merchantId, {
      jobId: jobIdOf(c.req.param('jobId')),
      after: query.after,
      limit: query.limit ?? 20,
    });
    return c.json(page, 200);
  });

  app.get('/portal/api/jobs/:jobId/unapplied', async (c) => {
    const query = portalQuery(c, UnappliedQuery);
    const after =
      query.afterKind && query.afterIdentifier
        ? { kind: query.afterKind, identifier: query.afterIdentifier }
        : undefined;
    const page = await jobUnappliedPage(c.get('deps'), portalSession(c).merchantId, {
      jobId: jobIdOf(c.req.param('jobId')),
      after,
      limit: query.limit ?? 20,
    });
    return c.json(page, 200);
  });

  app.get('/portal/api/jobs/:jobId/report', async (c) => {
    const report = await openJobReport(c.get('deps'), portalSession(c).merchantId, jobIdOf(c.req.param('jobId')), {
      signal: c.req.raw.signal,
      logger: c.get('logger'),
    });
    const gzip = acceptsGzip(c.req.header('accept-encoding'));
    c.header('Content-Type', 'application/x-ndjson');
    // A download, named after the job: the browser saves it rather than showing it.
    c.header('Content-Disposition', `attachment; filename="job-${report.jobId.replace(/[^\w.-]/g, '_')}.ndjson"`);
    c.header('Vary', 'Accept-Encoding');
    if (gzip) c.header('Content-Encoding', 'gzip');
    return c.body(encodedReport(report.body, gzip), 200);
  });

  app.get('/portal/api/jobs/:jobId/events', (c) =>
    jobEventsResponse(c, portalSession(c).merchantId, jobIdOf(c.req.param('jobId'))),
  );

  app.post('/portal/api/jobs/:jobId/abort', async (c) => {
    const session = portalSession(c);
    const jobId = jobIdOf(c.req.param('jobId'));
    const after = await abortMerchantJob(c.get('deps'), session.merchantId, jobId, c.get('logger'));
    c.set('jobId', jobId);
    // Recorded once done: a refused abort (another merchant's job, one already finished) changed nothing.
    await auditPortalAction(c, c.get('deps').db, { action: 'job.abort', target: jobId, after: { state: after.state } });
    return c.json(after, 200);
  });
}
