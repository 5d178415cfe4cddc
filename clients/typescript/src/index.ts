export {
  type JobReward,
  type JobStatus,
  MerchantApiError,
  MerchantClient,
  type MerchantClientOptions,
  type NewWebhookEndpoint,
  type RewardConfiguration,
  type WebhookDelivery,
  type WebhookEndpoint,
} from './client.js';
export { JobReportError, type JobReportSummary, saveJobReport } from './job-report.js';
export type { components, paths } from './merchant-api.js';
export { signatureHeader, signV1 } from './signing.js';
export { splitWithinLimits } from './split.js';
export type { JobEvent } from './watch.js';
export { type VerifyWebhookOptions, verifyWebhook, type WebhookEvent } from './webhooks.js';
