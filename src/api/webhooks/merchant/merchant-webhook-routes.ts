import type { MerchantRouteMiddleware } from '../../auth/merchant-auth.middleware.js';
import type { App } from '../../context.js';
import { registerWebhookDeliveries } from './webhook-deliveries.route.js';
import { registerWebhookEndpointDelete } from './webhook-endpoint-delete.route.js';
import { registerWebhookEndpointGet } from './webhook-endpoint-get.route.js';
import { registerWebhookEndpointPut } from './webhook-endpoint-put.route.js';
import { registerWebhookEndpointRotateSecret } from './webhook-endpoint-rotate-secret.route.js';
import { registerWebhookRecover } from './webhook-recover.route.js';
import { registerWebhookRedeliver } from './webhook-redeliver.route.js';
import { registerWebhookTest } from './webhook-test.route.js';

/**
 * The merchant's own webhook, through the signed merchant API. Reads go behind the read gate; every
 * change and every send behind the gate of the routes that queue work (a merchant on signature version
 * 2 only, when it asks so; a signature seen in a URL refused), as pointing the endpoint elsewhere or
 * replaying a month of events is as weighty as a cancel.
 */
export function registerMerchantWebhookRoutes(
  app: App,
  readAuth: MerchantRouteMiddleware,
  writeAuth: MerchantRouteMiddleware,
): void {
  registerWebhookEndpointGet(app, readAuth);
  registerWebhookEndpointPut(app, writeAuth);
  registerWebhookEndpointDelete(app, writeAuth);
  registerWebhookEndpointRotateSecret(app, writeAuth);
  registerWebhookDeliveries(app, readAuth);
  registerWebhookRedeliver(app, writeAuth);
  registerWebhookRecover(app, writeAuth);
  registerWebhookTest(app, writeAuth);
}
