import { createRoute, z } from '@hono/zod-openapi';
import { merchantStatuses } from '../../shared/db/schema.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { insertMerchant } from '../repositories/merchants.repository.js';
import { adminErrorResponses, identifier, jsonBody } from '../schemas.js';
import { adminRouteMeta, allowedIpsSchema, generateSecretKey } from './admin-schemas.js';

const CreateMerchantRequestSchema = z
  .strictObject({
    name: identifier.openapi({ example: 'Demo Casino' }),
    secretKey: z
      .string()
      .min(16)
      .max(255)
      .optional()
      .openapi({ description: 'The signing secret; when absent a random 256-bit one is generated' }),
    allowedIps: allowedIpsSchema.optional(),
  })
  .openapi('AdminCreateMerchantRequest');

const CreatedMerchantSchema = z
  .object({
    id: uuidSchema(),
    name: z.string(),
    secretKey: z.string().openapi({ description: 'Shown here and in rotations only' }),
    status: z.enum(merchantStatuses),
  })
  .openapi('AdminCreatedMerchant');

export function registerCreateMerchant(app: App): void {
  const route = createRoute({
    method: 'post',
    path: '/admin/v1/merchants',
    ...adminRouteMeta,
    summary: 'Create a merchant',
    request: { body: jsonBody(CreateMerchantRequestSchema) },
    responses: {
      201: { description: 'Created', content: { 'application/json': { schema: CreatedMerchantSchema } } },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    const merchant = await insertMerchant(c.get('deps').db, {
      name: body.name,
      secretKey: body.secretKey ?? generateSecretKey(),
      allowedIps: body.allowedIps ?? null,
    });
    c.get('logger').info({ merchantId: merchant.id }, 'merchant created');
    return c.json(
      { id: merchant.id, name: merchant.name, secretKey: merchant.secret_key, status: merchant.status },
      201,
    );
  });
}
