import { createRoute, z } from '@hono/zod-openapi';
import { AppError } from '../../../shared/errors/errors.js';
import { rotateWebhookSecret } from '../../../shared/webhooks/webhook-delivery-log.repository.js';
import { generateWebhookSecret } from '../../../shared/webhooks/webhook-signature.js';
import type { MerchantRouteMiddleware } from '../../auth/merchant-auth.middleware.js';
import type { App } from '../../context.js';
import { jsonBody } from '../../http/schemas.js';
import { auditMerchantWrite } from '../../merchants/admin-audit.js';
import { signedFields, webhookErrorResponses, webhooksPath, webhooksTag } from './merchant-webhook-context.js';

const RequestSchema = z.strictObject({ ...signedFields }).openapi('WebhookRotateSecretRequest');
const AnswerSchema = z
  .object({
    secret: z.string().openapi({
      description: 'The new signing secret: shown only in this answer',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/xSAaMzSA1c=',
    }),
    previousSecretExpiresAt: z
      .number()
      .int()
      .openapi({
        description:
          'Epoch milliseconds: until then every delivery carries two signatures in `webhook-signature` ' +
          '(`v1,<new> v1,<previous>`), so a receiver that knows either secret verifies it',
      }),
  })
  .openapi('RotatedWebhookSecret');

export function registerWebhookEndpointRotateSecret(app: App, auth: MerchantRouteMiddleware): void {
  const route = createRoute({
    method: 'post',
    path: webhooksPath('rotateSecret'),
    operationId: 'rotateWebhookSecret',
    tags: [webhooksTag],
    summary: "Replace your endpoint's signing secret; the previous one keeps signing for 24 hours",
    description:
      '24 hours unless the operator of the service set another overlap: `previousSecretExpiresAt` says when the ' +
      'previous secret stops signing. A secret replaced by an earlier rotation stops signing at once. Recorded ' +
      'in the audit log as your own change (never the secret).',
    middleware: auth,
    request: { body: jsonBody(RequestSchema) },
    responses: {
      200: { description: 'The new secret', content: { 'application/json': { schema: AnswerSchema } } },
      ...webhookErrorResponses,
    },
  });
  app.openapi(route, async (c) => {
    const merchantId = c.get('merchant').id;
    const { db, secrets, config } = c.get('deps');
    const secret = generateWebhookSecret();
    const previousSecretExpiresAt = new Date(Date.now() + config.WEBHOOK_PREVIOUS_SECRET_MS);
    const rotated = await db.transaction().execute(async (trx) => {
      const done = await rotateWebhookSecret(trx, secrets, merchantId, secret, previousSecretExpiresAt);
      if (done) {
        await auditMerchantWrite(c, trx, {
          action: 'webhook.secret.rotate',
          target: merchantId,
          after: { previousSecretExpiresAt: previousSecretExpiresAt.getTime() },
        });
      }
      return done;
    });
    if (!rotated) throw new AppError('CONFLICT', 'No webhook endpoint is set: set one with webhooks/put');
    c.get('logger').info({ merchantId, previousSecretExpiresAt }, 'webhook secret rotated');
    return c.json({ secret, previousSecretExpiresAt: previousSecretExpiresAt.getTime() }, 200);
  });
}
