import { merchantAuth } from './auth/merchant-auth.middleware.js';
import { registerBetSlip } from './bet-slip/bet-slip.route.js';
import { registerBulkCancel } from './cancellations/bulk-cancel.route.js';
import { registerBulkCancelByQuery } from './cancellations/bulk-cancel-by-query.route.js';
import { registerCancel } from './cancellations/cancel.route.js';
import type { App } from './context.js';
import { createClientAddressResolver } from './http/client-address.js';
import { registerAbortJob } from './jobs/abort-job.route.js';
import { registerJobEvents } from './jobs/job-events.route.js';
import { registerJobReport } from './jobs/job-report.route.js';
import { registerJobRewards } from './jobs/job-rewards.route.js';
import { registerJobStatus } from './jobs/job-status.route.js';
import { registerJobUnapplied } from './jobs/job-unapplied.route.js';
import { registerListJobs } from './jobs/list-jobs.route.js';
import { registerReadAll } from './reward-configurations/read-all.route.js';
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
