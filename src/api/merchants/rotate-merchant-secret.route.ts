import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../shared/errors/errors.js';
import type { App } from '../context.js';
import { adminErrorResponses, jsonBody } from '../http/schemas.js';
import { auditAdminWrite } from './admin-audit.js';
import { adminRouteMeta, generateSecretKey, MerchantIdParamsSchema } from './admin-schemas.js';
import { rotateMerchantSecret } from './merchants.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;

const RotateSecretRequestSchema = z
  .strictObject({
    previousValidForMs: z
      .number()
      .int()
      .min(0)
      .max(30 * DAY_MS)
      .default(DAY_MS)
      .openapi({
        description:
          'How long the old secret keeps verifying: 0 to 30 days, default 24 h. 0: it stops at once and is not kept',
      }),
  })
  .openapi('AdminRotateSecretRequest');

const RotatedSecretSchema = z
  .object({
    secretKey: z
      .string()
      .openapi({ description: 'The new secret, 256 random bits as hex: shown only in this answer, stored sealed' }),
    previousValidUntil: z.number().int().openapi({ description: 'Epoch milliseconds: the old secret expires then' }),
  })
  .openapi('AdminRotatedSecret');

export function registerRotateMerchantSecret(app: App): void {
  const route = createRoute({
    method: 'post',
    path: '/admin/v1/merchants/{merchantId}/secret-rotations',
    operationId: 'adminRotateMerchantSecret',
    ...adminRouteMeta,
    summary: "Replace a merchant's secret, keeping the old one valid for a while",
    description: 'The body may be `{}`. A secret replaced earlier (the previous-but-one) stops verifying at once.',
    request: { params: MerchantIdParamsSchema, body: jsonBody(RotateSecretRequestSchema) },
    responses: {
      201: { description: 'The new secret', content: { 'application/json': { schema: RotatedSecretSchema } } },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const merchantId = c.req.valid('param').merchantId.toLowerCase();
    const { previousValidForMs } = c.req.valid('json');
    const previousValidUntil = new Date(Date.now() + previousValidForMs);
    const secretKey = generateSecretKey();
    const merchant = await c
      .get('deps')
      .db.transaction()
      .execute(async (trx) => {
        const rotated = await rotateMerchantSecret(
          trx,
          c.get('deps').secrets,
          merchantId,
          secretKey,
          // An old secret valid for no time is not kept at all (nothing sealed lingers to be cleared later).
          previousValidForMs === 0 ? null : previousValidUntil,
        );
        // The secrets themselves never go into the log: only when the old one stops.
        if (rotated) {
          await auditAdminWrite(c, trx, {
            action: 'merchant.secret.rotate',
            target: merchantId,
            after: { previousValidUntil: previousValidForMs === 0 ? null : previousValidUntil.getTime() },
          });
        }
        return rotated;
      });
    if (!merchant) throw new AppError('NOT_FOUND', 'Merchant not found');
    c.get('deps').merchants.forget(merchantId);
    c.get('logger').info({ merchantId, previousValidUntil }, 'merchant secret rotated');
    return c.json({ secretKey, previousValidUntil: previousValidUntil.getTime() }, 201);
  });
}
