import { createClientAddressResolver } from './client-address.js';
import type { App } from './context.js';
import { merchantAuth } from './middleware/merchant-auth.middleware.js';
import { registerAbortJob } from './routes/abort-job.route.js';
import { registerBetSlip } from './routes/bet-slip.route.js';
import { registerBulkCancel } from './routes/bulk-cancel.route.js';
import { registerBulkCancelByQuery } from './routes/bulk-cancel-by-query.route.js';
import { registerCancel } from './routes/cancel.route.js';
import { registerJobEvents } from './routes/job-events.route.js';
import { registerJobReport } from './routes/job-report.route.js';
import { registerJobRewards } from './routes/job-rewards.route.js';
import { registerJobStatus } from './routes/job-status.route.js';
import { registerJobUnapplied } from './routes/job-unapplied.route.js';
import { registerListJobs } from './routes/list-jobs.route.js';
import { registerReadAll } from './routes/read-all.route.js';
import { registerMerchantWebhookRoutes } from './webhooks/merchant/merchant-webhook-routes.js';

/** Every merchant-facing route, each behind the one signature middleware. */
export function registerMerchantRoutes(app: App, trustedProxies: readonly string[]): void {
  const resolveClientAddress = createClientAddressResolver(trustedProxies);
  const cancelAuth = merchantAuth({
    merchantIdIsUuid: true,
    source: 'body',
    guard: 'cancel',
    seenInUrl: 'refuse',
    resolveClientAddress,
  });
  const readAuth = merchantAuth({
    merchantIdIsUuid: true,
    source: 'body',
    guard: 'read',
    seenInUrl: 'refuse',
    resolveClientAddress,
  });
  const betSlipPostAuth = merchantAuth({
    merchantIdIsUuid: false,
    source: 'body',
    guard: 'read',
    seenInUrl: 'allow',
    resolveClientAddress,
  });
  const betSlipGetAuth = merchantAuth({
    merchantIdIsUuid: false,
    source: 'query',
    guard: 'read',
    seenInUrl: 'mark',
    resolveClientAddress,
  });

  registerCancel(app, cancelAuth);
  registerBulkCancel(app, cancelAuth);
  registerBulkCancelByQuery(app, cancelAuth);
  registerAbortJob(app, cancelAuth);
  registerReadAll(app, readAuth);
  registerJobStatus(app, readAuth);
  registerJobRewards(app, readAuth);
  registerJobUnapplied(app, readAuth);
  registerJobReport(app, readAuth);
  registerListJobs(app, readAuth);
  registerBetSlip(app, betSlipPostAuth, betSlipGetAuth);
  registerMerchantWebhookRoutes(app, readAuth, cancelAuth);
  // Signed in its URL as GET /betSlip is, and so bound the same way: a triple seen there cannot cancel.
  registerJobEvents(
    app,
    merchantAuth({ merchantIdIsUuid: true, source: 'query', guard: 'read', seenInUrl: 'mark', resolveClientAddress }),
  );
}
