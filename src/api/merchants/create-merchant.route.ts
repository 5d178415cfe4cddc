import { createRoute, z } from '@hono/zod-openapi';
import { merchantStatuses } from '../../shared/db/schema.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { adminErrorResponses, identifier, jsonBody } from '../http/schemas.js';
import { auditAdminWrite } from './admin-audit.js';
import { adminRouteMeta, allowedIpsSchema, generateSecretKey, MIN_SECRET_LENGTH } from './admin-schemas.js';
import { insertMerchant } from './merchants.repository.js';

const CreateMerchantRequestSchema = z
  .strictObject({
    name: identifier.openapi({ example: 'Demo Casino' }),
    secretKey: z
      .string()
      .min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters (or leave it out for a generated one)`)
      .max(255)
      .optional()
      .openapi({
        description:
          `The signing secret, at least ${MIN_SECRET_LENGTH} characters (a shorter one could be found offline from one ` +
          'captured signature). When absent a random 256-bit one is generated, shown once in this answer. ' +
          'Stored sealed (SECRETS_KEYS), never readable again through the API.',
      }),
    allowedIps: allowedIpsSchema.optional(),
  })
  .openapi('AdminCreateMerchantRequest');

const CreatedMerchantSchema = z
  .object({
    id: uuidSchema(),
    name: z.string(),
    secretKey: z.string().openapi({ description: 'Shown here only (a rotation shows the next one): keep it now' }),
    status: z.enum(merchantStatuses),
  })
  .openapi('AdminCreatedMerchant');

export function registerCreateMerchant(app: App): void {
  const route = createRoute({
    method: 'post',
    path: '/admin/v1/merchants',
    operationId: 'adminCreateMerchant',
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
    const secretKey = body.secretKey ?? generateSecretKey();
    const merchant = await c
      .get('deps')
      .db.transaction()
      .execute(async (trx) => {
        const created = await insertMerchant(trx, c.get('deps').secrets, {
          name: body.name,
          secretKey,
          allowedIps: body.allowedIps ?? null,
        });
        await auditAdminWrite(c, trx, {
          action: 'merchant.create',
          target: created.id,
          after: { name: created.name, status: created.status, allowedIps: created.allowed_ips },
        });
        return created;
      });
    c.get('logger').info({ merchantId: merchant.id }, 'merchant created');
    return c.json({ id: merchant.id, name: merchant.name, secretKey, status: merchant.status }, 201);
  });
}
