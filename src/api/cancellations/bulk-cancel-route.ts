import { createRoute, type z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Db } from '../../shared/db/client.js';
import { deduplicationKey } from '../../shared/jobs/job-catalogue.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App, AppEnv } from '../context.js';
import { jsonBody, merchantErrorResponses } from '../http/schemas.js';
import { acceptedResponse, CancelHeadersSchema } from './cancel-answer.js';
import { type CancelRequest, enqueueAndAnswer, idempotencyErrorResponses } from './enqueue-cancellation.js';

/**
 * What the two bulk routes (bulkCancel, bulkCancelByQuery) share: their declaration (a signed JSON body,
 * the cancel headers, a 200 that is a dry run's counts when the body asks for one) and their end, a dry
 * run's read or the job stored through the producer (enqueue-cancellation.ts).
 */

/** The bulk routes, named by their operation, which ends their path too. */
const bulkOperations: readonly BulkJob['name'][] = ['bulkCancel', 'bulkCancelByQuery'];
const bulkRoutePath = (operation: BulkJob['name']) => `/api/v1/integration/rewards/${operation}`;

/** Also read by the body limits (http/body-limits.ts): only these routes take large bodies. */
export const BULK_ROUTE_PATHS: readonly string[] = bulkOperations.map(bulkRoutePath);

/** What a bulk route says of itself in the OpenAPI document; its path ends with its operationId. */
interface BulkRouteDeclaration<Body extends z.ZodType> {
  operationId: BulkJob['name'];
  summary: string;
  description: string;
  body: Body;
  /** The counts a dry run answers, kept in the components as `<OperationId>DryRun`. */
  dryRunCounts: z.ZodType;
}

export function bulkCancelRoute<Body extends z.ZodType>(
  app: App,
  auth: MerchantRouteMiddleware,
  declaration: BulkRouteDeclaration<Body>,
) {
  const { operationId } = declaration;
  const name = `${operationId.charAt(0).toUpperCase()}${operationId.slice(1)}DryRun`;
  return createRoute({
    method: 'post',
    path: bulkRoutePath(operationId),
    operationId,
    tags: ['Cancellation'],
    summary: declaration.summary,
    description: declaration.description,
    middleware: auth,
    request: { body: jsonBody(declaration.body), headers: CancelHeadersSchema },
    responses: {
      200: acceptedResponse(app, {
        when: 'dryRun: true',
        name,
        schema: declaration.dryRunCounts,
        description: `A dry run (\`dryRun: true\`) queues nothing and answers the counts as application/json (schema ${name}), without X-Job-Id, whatever Prefer says.`,
      }),
      ...idempotencyErrorResponses,
      ...merchantErrorResponses,
    },
  });
}

/** A bulk job and what it works on: its identifiers (the same ones make one shared waiting job). */
type BulkJob =
  | { name: 'bulkCancel'; identifiers: { ids: string[]; externalIds: string[] } }
  | {
      name: 'bulkCancelByQuery';
      identifiers: { playerIds: string[]; rewardConfigurationId?: string; externalRewardConfigurationId?: string };
    };

/**
 * The end of a bulk route, once its identifiers are checked and made distinct. With `dryRun`, the
 * counts it reads (a heavy read: one at a time per merchant) are the answer and nothing is stored;
 * otherwise the job is stored and answered as every cancel is (enqueueAndAnswer).
 */
export async function dryRunOrEnqueue(
  c: Context<AppEnv>,
  request: CancelRequest,
  job: BulkJob,
  dryRun: ((db: Db, merchantId: string) => Promise<object>) | undefined,
) {
  const merchantId = c.get('merchant').id;
  if (dryRun !== undefined) {
    const { reads, heavyReads } = c.get('deps');
    const counts = await heavyReads.run(merchantId, () => reads.read('dryRun', (db) => dryRun(db, merchantId)));
    return c.json(counts, 200);
  }
  const accepted = { merchantId, requestId: c.get('requestId'), acceptedAt: Date.now() };
  const key = deduplicationKey(merchantId, job.name, job.identifiers);
  return enqueueAndAnswer(c, job.name, { ...accepted, ...job.identifiers }, key, request);
}
