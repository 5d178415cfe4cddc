import type { App } from '../context.js';
import { adminBodyLimit } from '../http/body-limits.js';
import { readRequestBody } from '../library-bypasses/request-body.js';
import { registerPortalAdminRoutes } from '../portal/portal-admin.routes.js';
import { registerDeleteWebhook } from '../webhooks/delete-webhook.route.js';
import { registerGetWebhook } from '../webhooks/get-webhook.route.js';
import { registerListWebhookDeliveries } from '../webhooks/list-webhook-deliveries.route.js';
import { registerPutWebhook } from '../webhooks/put-webhook.route.js';
import { adminAuth } from './admin-auth.middleware.js';
import { registerCreateMerchant } from './create-merchant.route.js';
import { registerCreateRewardConfiguration } from './create-reward-configuration.route.js';
import { registerCreateRewards } from './create-rewards.route.js';
import { registerCreateSession } from './create-session.route.js';
import { registerGetJob } from './get-job.route.js';
import { registerGetReward } from './get-reward.route.js';
import { registerListAudit } from './list-audit.route.js';
import { registerRotateMerchantSecret } from './rotate-merchant-secret.route.js';
import { registerUpdateMerchant } from './update-merchant.route.js';

/**
 * The admin API (docs/design.md, "Admin plane"), on the admin listener, behind the operators' tokens. The gate covers every path under /admin/v1, known
 * or not, and runs before any body is validated: without the token nothing about a request is said.
 */
export function registerAdminRoutes(app: App): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'adminBearer', {
    type: 'http',
    scheme: 'bearer',
    description: "An operator's token (ADMIN_TOKENS, ADMIN_TOKEN)",
  });
  // The token is a header: checked before a byte of the body is read (http/body-limits.ts).
  app.use('/admin/v1/*', adminAuth(), readRequestBody(adminBodyLimit));

  registerCreateMerchant(app);
  registerUpdateMerchant(app);
  registerRotateMerchantSecret(app);
  registerCreateRewardConfiguration(app);
  registerCreateRewards(app);
  registerGetReward(app);
  registerCreateSession(app);
  registerGetJob(app);
  registerPutWebhook(app);
  registerGetWebhook(app);
  registerDeleteWebhook(app);
  registerListWebhookDeliveries(app);
  registerListAudit(app);
  registerPortalAdminRoutes(app);
}
