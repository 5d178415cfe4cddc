import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../shared/errors/errors.js';
import { AdminJobStatusSchema } from '../../shared/jobs/job-status-schema.js';
import { jobIdSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { adminErrorResponses } from '../http/schemas.js';
import { findJobStatus, primaryJobRecords } from '../jobs/job-status.js';
import { adminRouteMeta } from './admin-schemas.js';

export function registerGetJob(app: App): void {
  const route = createRoute({
    method: 'get',
    path: '/admin/v1/jobs/{jobId}',
    operationId: 'adminGetJob',
    ...adminRouteMeta,
    summary: "Any merchant's cancellation job: state, progress and counts",
    request: {
      params: z.object({
        jobId: jobIdSchema().openapi({ param: { name: 'jobId', in: 'path' } }),
      }),
    },
    responses: {
      200: { description: 'The job', content: { 'application/json': { schema: AdminJobStatusSchema } } },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const { jobId } = c.req.valid('param');
    const { redis, config, db, shards } = c.get('deps');
    const status = await findJobStatus(redis, shards, primaryJobRecords(db), jobId, config.RETENTION_MS, undefined);
    if (!status) throw new AppError('NOT_FOUND', 'Job not found');
    return c.json(status, 200);
  });
}
