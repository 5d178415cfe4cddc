import { createRoute, z } from '@hono/zod-openapi';
import { merchantStatuses } from '../../shared/db/schema.js';
import { AppError } from '../../shared/errors.js';
import { updateMerchant } from '../../shared/repositories/merchants.repository.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { adminErrorResponses, jsonBody } from '../schemas.js';
import { adminRouteMeta, allowedIpsSchema, MerchantIdParamsSchema } from './admin-schemas.js';

const UpdateMerchantRequestSchema = z
  .strictObject({
    status: z.enum(merchantStatuses).optional().openapi({ description: 'DISABLED merchants fail authentication' }),
    allowedIps: allowedIpsSchema.optional(),
  })
  .openapi('AdminUpdateMerchantRequest');

const MerchantSchema = z
  .object({
    id: uuidSchema(),
    name: z.string(),
    status: z.enum(merchantStatuses),
    allowedIps: z.array(z.string()).nullable(),
  })
  .openapi('AdminMerchant');

export function registerUpdateMerchant(app: App): void {
  const route = createRoute({
    method: 'patch',
    path: '/admin/v1/merchants/{merchantId}',
    ...adminRouteMeta,
    summary: 'Enable or disable a merchant, or change its source allow-list',
    description: 'Fields left out keep their value; `allowedIps: null` allows any source.',
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
    const merchant = await updateMerchant(c.var.deps.db, merchantId, changes);
    if (!merchant) throw new AppError('NOT_FOUND', 'Merchant not found');
    // Other API processes see the change when their cache entry expires (MERCHANT_CACHE_TTL_MS).
    c.var.deps.merchants.forget(merchantId);
    c.var.logger.info({ merchantId, status: merchant.status }, 'merchant updated');
    return c.json(
      { id: merchant.id, name: merchant.name, status: merchant.status, allowedIps: merchant.allowed_ips },
      200,
    );
  });
}
