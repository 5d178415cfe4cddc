import { createRoute, z } from '@hono/zod-openapi';
import { type Merchant, merchantStatuses } from '../../shared/db/schema.js';
import { AppError } from '../../shared/errors/errors.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { adminErrorResponses, jsonBody } from '../http/schemas.js';
import { auditAdminWrite } from './admin-audit.js';
import {
  adminRouteMeta,
  allowedIpsSchema,
  MerchantIdParamsSchema,
  quotaSchema,
  requireSignatureV2Schema,
  signatureVersionSchema,
} from './admin-schemas.js';
import { lockMerchant, updateMerchant } from './merchants.repository.js';

const UpdateMerchantRequestSchema = z
  .strictObject({
    status: z.enum(merchantStatuses).optional().openapi({ description: 'DISABLED merchants fail authentication' }),
    allowedIps: allowedIpsSchema.optional(),
    maxQueuedJobs: quotaSchema.optional().openapi({
      description:
        'Most bulk jobs of this merchant queued or running at once (the parts of a split job not counted); ' +
        'a request past it is refused with 429. null: the deployment default (MAX_QUEUED_JOBS).',
      example: 100,
    }),
    rateLimitPerSecond: quotaSchema.optional().openapi({
      description:
        'Requests per second on merchant routes, across all API replicas; past it, 429. ' +
        'null: the deployment default (RATE_LIMIT_PER_SECOND, where 0 means no limit).',
      example: 50,
    }),
    signatureVersion: signatureVersionSchema.optional(),
    requireSignatureV2: requireSignatureV2Schema.optional(),
  })
  .openapi('AdminUpdateMerchantRequest');

const MerchantSchema = z
  .object({
    id: uuidSchema(),
    name: z.string(),
    status: z.enum(merchantStatuses),
    allowedIps: z.array(z.string()).nullable(),
    maxQueuedJobs: z.number().int().nullable().openapi({ description: "The merchant's own cap; null: the default" }),
    rateLimitPerSecond: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The merchant's own rate limit; null: the default" }),
    signatureVersion: signatureVersionSchema,
    requireSignatureV2: requireSignatureV2Schema,
  })
  .openapi('AdminMerchant');

export function registerUpdateMerchant(app: App): void {
  const route = createRoute({
    method: 'patch',
    path: '/admin/v1/merchants/{merchantId}',
    operationId: 'adminUpdateMerchant',
    ...adminRouteMeta,
    summary: 'Enable or disable a merchant, or change its source allow-list, quotas or signature rules',
    description:
      'Fields left out keep their value; `allowedIps: null` allows any source; `maxQueuedJobs: null` and ' +
      '`rateLimitPerSecond: null` return to the deployment defaults. `signatureVersion: 2` makes every request of ' +
      'the merchant also carry the body-bound `X-Signature` header (`1`, the default, drops that requirement); ' +
      '`requireSignatureV2: true` requires it on the cancel and abort routes only, refusing version 1 there.',
    request: { params: MerchantIdParamsSchema, body: jsonBody(UpdateMerchantRequestSchema) },
    responses: {
      200: {
        description: 'The merchant after the change',
        content: { 'application/json': { schema: MerchantSchema } },
      },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const merchantId = c.req.valid('param').merchantId.toLowerCase();
    const changes = c.req.valid('json');
    // The change and its audit row in one transaction: the log holds a change exactly when it happened.
    const merchant = await c
      .get('deps')
      .db.transaction()
      .execute(async (trx) => {
        const before = await lockMerchant(trx, merchantId);
        if (!before) return undefined;
        const after = await updateMerchant(trx, merchantId, changes);
        if (!after) return undefined;
        await auditAdminWrite(c, trx, {
          action: 'merchant.update',
          target: merchantId,
          before: merchantSettings(before),
          after: merchantSettings(after),
        });
        return after;
      });
    if (!merchant) throw new AppError('NOT_FOUND', 'Merchant not found');
    // Other API processes see the change when their cache entry expires (MERCHANT_CACHE_TTL_MS).
    c.get('deps').merchants.forget(merchantId);
    c.get('logger').info({ merchantId, status: merchant.status, changed: Object.keys(changes) }, 'merchant updated');
    return c.json(
      {
        id: merchant.id,
        name: merchant.name,
        status: merchant.status,
        allowedIps: merchant.allowed_ips,
        maxQueuedJobs: merchant.max_queued_jobs,
        rateLimitPerSecond: merchant.rate_limit_per_second,
        signatureVersion: merchant.signature_version,
        requireSignatureV2: merchant.require_signature_v2,
      },
      200,
    );
  });
}

/** The settings of a merchant an admin may change, as the audit log keeps them (no secret). */
function merchantSettings(merchant: Merchant): Record<string, unknown> {
  return {
    status: merchant.status,
    allowedIps: merchant.allowed_ips,
    maxQueuedJobs: merchant.max_queued_jobs,
    rateLimitPerSecond: merchant.rate_limit_per_second,
    signatureVersion: merchant.signature_version,
  };
}
