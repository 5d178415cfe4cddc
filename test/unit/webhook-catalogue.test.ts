import { describe, expect, it } from 'vitest';
import {
  allWebhookEventTypes,
  WEBHOOK_MAX_ATTEMPTS,
  webhookEventId,
  webhookJobOptions,
  webhookRetryDelayMs,
} from '../../src/shared/webhooks/webhook-catalogue.js';
import {
  assertWebhookEventCatalogueComplete,
  webhookEventCatalogue,
} from '../../src/shared/webhooks/webhook-events.js';
import { isUuid } from '../../src/shared/wire-rules.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe('webhook retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, and gives up at the seventh failure', () => {
    expect([1, 2, 3, 4, 5, 6].map((failed) => webhookRetryDelayMs(failed, 1))).toEqual([
      5 * SECOND,
      5 * MINUTE,
      30 * MINUTE,
      2 * HOUR,
      5 * HOUR,
      10 * HOUR,
    ]);
    expect(WEBHOOK_MAX_ATTEMPTS).toBe(7);
    expect(webhookJobOptions.attempts).toBe(7);
  });

  it('is shrunk by WEBHOOK_RETRY_SCALE, keeping its shape', () => {
    expect([1, 2, 6].map((failed) => webhookRetryDelayMs(failed, 0.001))).toEqual([5, 300, 36_000]);
  });
});

describe('webhookEventId', () => {
  const merchant = '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b';
  const other = '11111111-2222-4333-8444-555555555555';

  it('is a UUID, the same for the same merchant, job and event type', () => {
    const id = webhookEventId(merchant, 'job-1', 'job.completed');
    expect(isUuid(id)).toBe(true);
    expect(webhookEventId(merchant, 'job-1', 'job.completed')).toBe(id);
  });

  it('differs when the merchant, the job or the type differs', () => {
    const id = webhookEventId(merchant, 'job-1', 'job.completed');
    expect(webhookEventId(other, 'job-1', 'job.completed')).not.toBe(id);
    expect(webhookEventId(merchant, 'job-2', 'job.completed')).not.toBe(id);
    expect(webhookEventId(merchant, 'job-1', 'job.cancelled')).not.toBe(id);
  });
});

describe('the webhook event catalogue', () => {
  it('has an entry for every event type, each example matching its schema (the start-up check passes)', () => {
    expect(Object.keys(webhookEventCatalogue).sort()).toEqual([...allWebhookEventTypes].sort());
    expect(() => assertWebhookEventCatalogueComplete()).not.toThrow();
  });

  it('makes the start-up check fail when an example does not match its schema', () => {
    const entry = webhookEventCatalogue['job.completed'];
    const saved = entry.example;
    entry.example = { ...saved, data: { ...(saved.data as object), progress: 'all' } };
    try {
      expect(() => assertWebhookEventCatalogueComplete()).toThrow(/job\.completed: its example does not match/);
    } finally {
      entry.example = saved;
    }
  });
});
