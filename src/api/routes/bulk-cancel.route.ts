import { createRoute, z } from '@hono/zod-openapi';
import { deduplicationKey } from '../../shared/queue/job-catalogue.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import type { MerchantRouteMiddleware } from '../middleware/merchant-auth.middleware.js';
import { previewCancelByIdentifiers } from '../repositories/cancellation-preview.repository.js';
import {
  assertListSize,
  bulkList,
  dryRunField,
  identifier,
  jsonBody,
  merchantErrorResponses,
  signedFields,
} from '../schemas.js';
import { acceptedResponse, CancelHeadersSchema } from './cancel-answer.js';
import { enqueueAndAnswer, idempotencyErrorResponses } from './enqueue-cancellation.js';

const BulkCancelRequestSchema = z
  .object({
    ...signedFields,
    ids: bulkList(uuidSchema(), 0).nullish().openapi({ description: 'Reward ids' }),
    externalIds: bulkList(identifier, 0).nullish().openapi({ description: 'Merchant-defined reward ids' }),
    dryRun: dryRunField,
  })
  .openapi('BulkCancelRequest', {
    description:
      'ids and externalIds together hold 1 to 10,000 entries (BULK_MAX_ITEMS; each list alone is at most that, ' +
      'their sum is checked too): at least one list is non-empty. Absent or null lists count as empty.',
    // At least one entry (the route's assertListSize): one of the lists is a non-empty array.
    anyOf: [
      { required: ['ids'], properties: { ids: { type: 'array', minItems: 1 } } },
      { required: ['externalIds'], properties: { externalIds: { type: 'array', minItems: 1 } } },
    ],
  });

const count = (description: string) => z.number().int().nonnegative().openapi({ description });

const BulkCancelDryRunSchema = z
  .object({
    requested: count('Distinct identifiers of the request'),
    cancellable: count('ACTIVE rewards matched: what the job would cancel now'),
    alreadyCancelled: count('Rewards matched that are CANCELLED already'),
    notCancellable: count('Rewards matched that are USED or EXPIRED'),
    notFound: count('Identifiers that match no reward of the merchant'),
  })
  .openapi('BulkCancelDryRun');

/** Also read by the body limits (http/body-limits.ts): this route takes large bodies. */
export const BULK_CANCEL_PATH = '/api/v1/integration/rewards/bulkCancel';

export function registerBulkCancel(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: BULK_CANCEL_PATH,
    operationId: 'bulkCancel',
    tags: ['Cancellation'],
    summary: 'Cancel many rewards by ids and/or externalIds',
    description:
      'Rewards matching either list are cancelled. Together the lists hold 1 to 10,000 entries ' +
      '(BULK_MAX_ITEMS); duplicates collapse. One malformed entry rejects the whole request. ' +
      'With `dryRun: true`, nothing is queued and the answer counts what the request would do now.',
    middleware: auth,
    request: { body: jsonBody(BulkCancelRequestSchema), headers: CancelHeadersSchema },
    responses: {
      200: acceptedResponse(app, {
        when: 'dryRun: true',
        name: 'BulkCancelDryRun',
        schema: BulkCancelDryRunSchema,
        description:
          'A dry run (`dryRun: true`) queues nothing and answers the counts as application/json (schema BulkCancelDryRun), ' +
          'without X-Job-Id, whatever Prefer says.',
      }),
      ...idempotencyErrorResponses,
      ...merchantErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    const ids = body.ids ?? [];
    const externalIds = body.externalIds ?? [];
    assertListSize(ids.length + externalIds.length, c.get('deps').config.BULK_MAX_ITEMS, 'ids and externalIds');
    const merchantId = c.get('merchant').id;
    // Ids are compared lower-case in Postgres' uuid type; collapse spelling variants here too.
    const uniqueIds = [...new Set(ids.map((id) => id.toLowerCase()))];
    const uniqueExternalIds = [...new Set(externalIds)];
    if (body.dryRun === true) {
      const { reads, heavyReads } = c.get('deps');
      const preview = await heavyReads.run(merchantId, () =>
        reads.read('dryRun', (db) =>
          previewCancelByIdentifiers(db, { merchantId, ids: uniqueIds, externalIds: uniqueExternalIds }),
        ),
      );
      return c.json({ requested: uniqueIds.length + uniqueExternalIds.length, ...preview }, 200);
    }
    const payload = {
      merchantId,
      requestId: c.get('requestId'),
      acceptedAt: Date.now(),
      ids: uniqueIds,
      externalIds: uniqueExternalIds,
    };
    const key = deduplicationKey(merchantId, 'bulkCancel', { ids: uniqueIds, externalIds: uniqueExternalIds });
    const request = { fields: body, idempotencyKey: c.req.valid('header')['idempotency-key'] };
    return enqueueAndAnswer(c, 'bulkCancel', payload, key, request);
  });
}
