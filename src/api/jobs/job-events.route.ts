import { createRoute, z } from '@hono/zod-openapi';
import { jobIdSchema, timestampTextSchema } from '../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App } from '../context.js';
import { errorResponse, merchantErrorResponses, signedFields } from '../http/schemas.js';
import { jobEventsResponse } from './events/job-events-response.js';

const JobEventsQuerySchema = z.object({
  ...signedFields,
  timestamp: timestampTextSchema().openapi({
    description: 'Epoch milliseconds, within ±5 minutes of the server clock',
    example: '1763679600000',
  }),
  jobId: jobIdSchema().openapi({ description: 'The X-Job-Id of a cancel answer' }),
});

const description =
  'Follows one job as Server-Sent Events (`text/event-stream`): a `progress` event (the job status, as ' +
  '`jobs/status` answers it) when it changes, at most once a second; then one event named by the end state ' +
  '(`completed`, `failed` or `cancelled`) with the final status, and the stream ends. Every event has an `id`: ' +
  'send it back as `Last-Event-ID` when reconnecting and only a status you have not seen is sent (the final ' +
  'event always). A comment line every 15 s keeps proxies from closing an idle stream. The signed fields are in ' +
  'the query (signed as every request); a version-1 signature sent in this URL cannot then be used on a route ' +
  'that cancels. Streams open at once are bounded per merchant and per server: past either, 429 errorCode 7.';

export function registerJobEvents(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'get',
    path: '/api/v1/integration/jobs/events',
    operationId: 'watchJobEvents',
    tags: ['Cancellation'],
    summary: 'Follow a job as a stream of events',
    description,
    middleware: auth,
    request: {
      query: JobEventsQuerySchema,
      headers: z.object({
        'last-event-id': z
          .string()
          .max(128)
          .optional()
          .openapi({ description: 'The id of the last event received, when reconnecting' }),
      }),
    },
    responses: {
      200: {
        description: "The job's events: `event: progress|completed|failed|cancelled`, `id:`, `data:` a job status",
        content: {
          'text/event-stream': {
            schema: z.string().openapi({
              example:
                'event: progress\nid: 3q2-7wEjH5nC0b1xGm4ZpA\ndata: {"jobId":"…","state":"running","progress":40,…}\n\n' +
                'event: completed\nid: Y8k1v0Jc2wq9n3EoT5rUaQ\ndata: {"jobId":"…","state":"completed","progress":100,…}\n\n',
            }),
          },
        },
      },
      404: errorResponse('NOT_FOUND (10): no such job for this merchant'),
      ...merchantErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const { jobId } = c.req.valid('query');
    // The 200 declares `text/event-stream`, a media type @hono/zod-openapi types as a plain `Response`:
    // the stream streamSSE answers is that type as it is.
    return jobEventsResponse(c, c.get('merchant').id, jobId);
  });
}
