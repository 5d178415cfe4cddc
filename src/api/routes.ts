import { createClientAddressResolver } from './client-address.js';
import type { App } from './context.js';
import { merchantAuth } from './middleware/merchant-auth.middleware.js';
import { registerAbortJob } from './routes/abort-job.route.js';
import { registerBetSlip } from './routes/bet-slip.route.js';
import { registerBulkCancel } from './routes/bulk-cancel.route.js';
import { registerBulkCancelByQuery } from './routes/bulk-cancel-by-query.route.js';
import { registerCancel } from './routes/cancel.route.js';
import { registerJobRewards } from './routes/job-rewards.route.js';
import { registerJobStatus } from './routes/job-status.route.js';
import { registerReadAll } from './routes/read-all.route.js';

/** Every merchant-facing route, each behind the one signature middleware. */
export function registerMerchantRoutes(app: App, trustedProxies: readonly string[]): void {
  const resolveClientAddress = createClientAddressResolver(trustedProxies);
  const v1Auth = merchantAuth({ merchantIdIsUuid: true, source: 'body', resolveClientAddress });
  const betSlipPostAuth = merchantAuth({ merchantIdIsUuid: false, source: 'body', resolveClientAddress });
  const betSlipGetAuth = merchantAuth({ merchantIdIsUuid: false, source: 'query', resolveClientAddress });

  registerCancel(app, v1Auth);
  registerBulkCancel(app, v1Auth);
  registerBulkCancelByQuery(app, v1Auth);
  registerReadAll(app, v1Auth);
  registerJobStatus(app, v1Auth);
  registerAbortJob(app, v1Auth);
  registerJobRewards(app, v1Auth);
  registerBetSlip(app, betSlipPostAuth, betSlipGetAuth);
}
