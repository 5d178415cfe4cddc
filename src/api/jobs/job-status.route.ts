import { createRoute, z } from '@hono/zod-openapi';
import { JobStatusSchema } from '../../shared/jobs/job-status-schema.js';
import { toPublicStatus } from '../../shared/jobs/public-status.js';
import { jobIdSchema } from '../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App } from '../context.js';
import { errorResponse, jsonBody, merchantErrorResponses, signedFields } from '../http/schemas.js';
import { requireMerchantJob } from './merchant-job.js';

const JobStatusRequestSchema = z
  .object({
    ...signedFields,
    jobId: jobIdSchema().openapi({ description: 'The X-Job-Id of a cancel answer' }),
  })
  .openapi('JobStatusRequest');

export function registerJobStatus(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: '/api/v1/integration/jobs/status',
    operationId: 'getJobStatus',
    tags: ['Cancellation'],
    summary: 'Status and result counts of a cancellation job',
    middleware: auth,
    request: { body: jsonBody(JobStatusRequestSchema) },
    responses: {
      200: { description: 'The job', content: { 'application/json': { schema: JobStatusSchema } } },
      404: errorResponse('NOT_FOUND (10): no such job for this merchant'),
      ...merchantErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const { jobId } = c.req.valid('json');
    const status = await requireMerchantJob(c.get('deps'), c.get('merchant').id, jobId);
    return c.json(toPublicStatus(status), 200);
  });
}
