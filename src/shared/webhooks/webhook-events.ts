import { z } from '@hono/zod-openapi';
import { JobStatusSchema } from '../jobs/job-status-schema.js';
import { type AnyWebhookEventType, allWebhookEventTypes, webhookTestEventType } from './webhook-catalogue.js';

/**
 * The catalogue of webhook events: for every type a delivery may carry, what it means, the schema of
 * its `data` and an example body. The OpenAPI document's `webhooks` section is built from it, and a
 * worker refuses to start when a type has no entry or its example does not match its schema
 * (assertWebhookEventCatalogueComplete), as it refuses a job kind without a processor.
 */

export const WebhookTestDataSchema = z
  .object({
    merchantId: z.string().openapi({ description: 'The merchant whose endpoint is tested' }),
    message: z.string().openapi({ description: 'A fixed sentence; nothing to act on' }),
  })
  .openapi('WebhookTestData');

export interface WebhookEventEntry {
  /** One sentence: when it is sent. */
  summary: string;
  /** Its `data`; a job event carries the job's public status (JobStatus). */
  data: z.ZodType;
  /** The name of `data`'s schema in the OpenAPI document's components. */
  dataComponent: 'JobStatus' | 'WebhookTestData';
  example: { type: AnyWebhookEventType; timestamp: string; data: unknown };
}

const jobExample = (state: 'completed' | 'failed' | 'cancelled', error: string | null) => ({
  jobId: '5a0d7f1e-3b2c-4d8e-9f60-1a2b3c4d5e6f',
  operation: 'bulkCancel',
  state,
  createdAt: 1763679600000,
  startedAt: 1763679600120,
  finishedAt: 1763679601450,
  progress: state === 'completed' ? 100 : 40,
  result:
    state === 'failed' ? null : { requested: 3, cancelled: 2, alreadyCancelled: 0, notCancellable: 1, notFound: 0 },
  error,
});

export const webhookEventCatalogue: Record<AnyWebhookEventType, WebhookEventEntry> = {
  'job.completed': {
    summary: 'A cancellation job finished: every requested reward was looked at (result holds the counts)',
    data: JobStatusSchema,
    dataComponent: 'JobStatus',
    example: { type: 'job.completed', timestamp: '2025-11-20T23:00:01.450Z', data: jobExample('completed', null) },
  },
  'job.failed': {
    summary: 'A cancellation job gave up after its attempts (rewards cancelled before stay cancelled)',
    data: JobStatusSchema,
    dataComponent: 'JobStatus',
    example: {
      type: 'job.failed',
      timestamp: '2025-11-20T23:00:01.450Z',
      data: jobExample('failed', 'The job failed; retrying it may help'),
    },
  },
  'job.cancelled': {
    summary: 'A cancellation job was stopped by an abort (jobs/abort); result counts what it cancelled before',
    data: JobStatusSchema,
    dataComponent: 'JobStatus',
    example: { type: 'job.cancelled', timestamp: '2025-11-20T23:00:01.450Z', data: jobExample('cancelled', null) },
  },
  [webhookTestEventType]: {
    summary: 'Sent when the merchant asks for it (webhooks/test), whatever its endpoint subscribes to',
    data: WebhookTestDataSchema,
    dataComponent: 'WebhookTestData',
    example: {
      type: webhookTestEventType,
      timestamp: '2025-11-20T23:00:00.000Z',
      data: {
        merchantId: '7d3f6a52-94c1-4b8e-a0d2-5e6f7a8b9c0d',
        message: 'A test event, sent because you asked for one; nothing to act on',
      },
    },
  },
};

/** The body of a test event for this merchant. */
export function webhookTestBody(merchantId: string, now = new Date()): string {
  return JSON.stringify({
    type: webhookTestEventType,
    timestamp: now.toISOString(),
    data: { merchantId, message: 'A test event, sent because you asked for one; nothing to act on' },
  });
}

/** Start-up: every event type has its entry, and every example is what its schema says. */
export function assertWebhookEventCatalogueComplete(): void {
  const problems: string[] = [];
  for (const type of allWebhookEventTypes) {
    const entry = webhookEventCatalogue[type];
    if (!entry) {
      problems.push(`${type}: no catalogue entry`);
      continue;
    }
    if (entry.example.type !== type) problems.push(`${type}: its example says type ${entry.example.type}`);
    const parsed = entry.data.safeParse(entry.example.data);
    if (!parsed.success) problems.push(`${type}: its example does not match its schema (${parsed.error.message})`);
  }
  if (problems.length > 0) throw new Error(`webhook event catalogue incomplete: ${problems.join('; ')}`);
}
