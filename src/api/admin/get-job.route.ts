import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../shared/errors.js';
import { findJobStatus } from '../../shared/job-status.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { JobStatusSchema } from '../routes/job-status.route.js';
import { adminErrorResponses } from '../schemas.js';
import { adminRouteMeta } from './admin-schemas.js';

const AdminJobStatusSchema = JobStatusSchema.extend({ merchantId: uuidSchema() }).openapi('AdminJobStatus');

export function registerGetJob(app: App): void {
  const route = createRoute({
    method: 'get',
    path: '/admin/v1/jobs/{jobId}',
    ...adminRouteMeta,
    summary: "Any merchant's cancellation job: state, progress and counts",
    request: {
      params: z.object({
        jobId: z
          .string()
          .min(1)
          .max(128)
          .openapi({ param: { name: 'jobId', in: 'path' } }),
      }),
    },
    responses: {
      200: { description: 'The job', content: { 'application/json': { schema: AdminJobStatusSchema } } },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const { jobId } = c.req.valid('param');
    const { producer, db } = c.var.deps;
    const status = await findJobStatus(Object.values(producer.queues), db, jobId);
    if (!status) throw new AppError('NOT_FOUND', 'Job not found');
    return c.json(status as z.infer<typeof AdminJobStatusSchema>, 200);
  });
}
