import { z } from '@hono/zod-openapi';
import type { Db } from '../../shared/db/client.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App } from '../context.js';
import { assertListSize, bulkList, dryRunField, identifier, signedFields } from '../http/schemas.js';
import { bulkCancelRoute, dryRunOrEnqueue } from './bulk-cancel-route.js';
import { previewCancelByIdentifiers } from './cancellation-preview.repository.js';

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

export function registerBulkCancel(app: App, auth: MerchantRouteMiddleware): void {
  const route = bulkCancelRoute(app, auth, {
    operationId: 'bulkCancel',
    summary: 'Cancel many rewards by ids and/or externalIds',
    description:
      'Rewards matching either list are cancelled. Together the lists hold 1 to 10,000 entries ' +
      '(BULK_MAX_ITEMS); duplicates collapse. One malformed entry rejects the whole request. ' +
      'With `dryRun: true`, nothing is queued and the answer counts what the request would do now.',
    body: BulkCancelRequestSchema,
    dryRunCounts: BulkCancelDryRunSchema,
  });

  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    const ids = body.ids ?? [];
    const externalIds = body.externalIds ?? [];
    assertListSize(ids.length + externalIds.length, c.get('deps').config.BULK_MAX_ITEMS, 'ids and externalIds');
    // Ids are compared lower-case in Postgres' uuid type; collapse spelling variants here too.
    const identifiers = {
      ids: [...new Set(ids.map((id) => id.toLowerCase()))],
      externalIds: [...new Set(externalIds)],
    };
    const counts = async (db: Db, merchantId: string) => ({
      requested: identifiers.ids.length + identifiers.externalIds.length,
      ...(await previewCancelByIdentifiers(db, { merchantId, ...identifiers })),
    });
    const request = { fields: body, idempotencyKey: c.req.valid('header')['idempotency-key'] };
    return dryRunOrEnqueue(c, request, { name: 'bulkCancel', identifiers }, body.dryRun ? counts : undefined);
  });
}
