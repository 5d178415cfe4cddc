import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchIdOf } from '../../src/shared/cancellations/member-ids.js';
import { queueNames } from '../../src/shared/redis/redis-keys.js';
import { webhookEventId, webhookQueueName } from '../../src/shared/webhooks/webhook-catalogue.js';
import { launchChromium, offlineContext } from '../helpers/browser.js';
import { cancelPaths, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

// The two pages an operator opens in the first hour, in a real (headless) Chromium on a machine
// without internet: the API reference and the queue dashboard. The deadlines are generous: the
// machine running the suite may be busy, and a 4 MB script takes a while to parse there.

const DOCS_SCRIPT_PATH = '/docs/assets/standalone.js';

// Webhooks to the test's own receiver on 127.0.0.1.
const { env, api } = useTestContext({ settings: { WEBHOOK_ALLOW_PRIVATE: 'true' }, api: true, worker: true });
let browser: Browser;

beforeAll(async () => {
  // When Chromium is missing, this fails the file with the install command.
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

type OpenApiDocument = { paths: Record<string, Record<string, { summary?: string; tags?: string[] }>> };

describe('/docs without internet access', () => {
  it('renders the reference from our own server, listing the operations', { timeout: 120_000 }, async () => {
    const document = (await (await api.get('/openapi.json')).json()) as OpenApiDocument;
    const cancelSummary = document.paths[cancelPaths.cancel]?.post?.summary;
    const readAll = document.paths['/api/v1/integration/reward-configurations/readAll']?.post;
    const readAllSummary = readAll?.summary;
    expect(cancelSummary).toBeTruthy();
    expect(readAllSummary).toBeTruthy();

    const { context, blocked } = await offlineContext(browser);
    try {
      const page = await context.newPage();
      const scripts: string[] = [];
      page.on('response', (response) => {
        if (response.request().resourceType() === 'script') scripts.push(new URL(response.url()).pathname);
      });
      const response = await page.goto(`${api.baseUrl}/docs`);
      expect(response?.status()).toBe(200);

      // Scalar renders each operation's summary in the sidebar and in the operation's section.
      await page
        .getByText(cancelSummary as string)
        .first()
        .waitFor({ timeout: 60_000 });
      // Only the first tag starts open: open readAll's tag in the sidebar, as a reader would.
      await page
        .getByText(readAll?.tags?.[0] as string, { exact: true })
        .first()
        .click();
      await page
        .getByText(readAllSummary as string)
        .first()
        .waitFor({ timeout: 60_000 });
      expect(await page.title()).toBe('Merchant rewards gateway API');
      expect(scripts).toContain(DOCS_SCRIPT_PATH);
      // Nothing needed the internet; anything the page tried is listed in the failure message.
      expect(blocked).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('serves the script with a long cache lifetime, gzipped when the browser accepts it', async () => {
    const html = await (await api.get('/docs')).text();
    const src = html.match(/<script src="([^"]+)"/)?.[1];
    expect(src).toMatch(new RegExp(`^${DOCS_SCRIPT_PATH}\\?v=\\d+\\.\\d+\\.\\d+`));
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)[a-z0-9.-]+\/[^"']*\.js/i);

    const plain = await api.get(src as string, { 'accept-encoding': 'identity' });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-encoding')).toBeNull();
    const body = await plain.text();
    expect(body).toContain('createApiReference');

    // fetch() decompresses for us: the same script, sent compressed.
    const gzipped = await api.get(src as string, { 'accept-encoding': 'gzip' });
    expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    expect(await gzipped.text()).toBe(body);
  });
});

describe('/admin/queues in a browser', () => {
  let merchant: MerchantFixture;

  beforeAll(async () => {
    merchant = await createMerchant(env.db);
  });

  it('shows a cancel job submitted over HTTP on the cancel queue page', { timeout: 120_000 }, async () => {
    const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
    const [reward] = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configuration.id,
      rewards: [{ playerId: 'browser-player' }],
    });
    const jobId = await requestCancellation(api, merchant, 'cancel', { id: reward?.id });
    expect((await waitForJob(api, merchant, jobId)).state).toBe('completed');

    const { context, blocked } = await offlineContext(browser, {
      httpCredentials: { username: 'operator', password: env.config.ADMIN_TOKEN as string },
    });
    try {
      const page = await context.newPage();
      const response = await page.goto(`${api.adminUrl}/admin/queues/queue/${queueNames.single}?status=completed`);
      expect(response?.status()).toBe(200);
      // The dashboard is a single-page app: the job list appears once it has asked the API. It lists
      // queue jobs: the single cancel is there as the batch it was stored in.
      await page.getByText(batchIdOf(jobId)).first().waitFor({ timeout: 60_000 });
      // bull-board's page links a Google Fonts stylesheet; without it the text is in system fonts.
      // Nothing else may need the internet.
      expect(blocked.filter((url) => !url.startsWith('https://fonts.googleapis.com/'))).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows the webhooks queue, and a delivered event on its page', { timeout: 120_000 }, async () => {
    const receiver = await startWebhookReceiver();
    try {
      const put = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchant.id}/webhook`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${receiver.url}/hooks`, events: ['job.completed'] }),
      });
      expect(put.status).toBe(200);
      const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
      const [reward] = await createRewards(env.db, {
        merchantId: merchant.id,
        rewardConfigurationId: configuration.id,
        rewards: [{ playerId: 'browser-webhook-player' }],
      });
      const jobId = await requestCancellation(api, merchant, 'bulkCancel', { ids: [reward?.id] });
      expect((await waitForJob(api, merchant, jobId)).state).toBe('completed');
      await eventually(async () => (receiver.received.length > 0 ? true : undefined), { what: 'the webhook' });
      const eventId = webhookEventId(merchant.id, jobId, 'job.completed');

      const { context } = await offlineContext(browser, {
        httpCredentials: { username: 'operator', password: env.config.ADMIN_TOKEN as string },
      });
      try {
        const page = await context.newPage();
        // The board's queue list names the webhooks queue beside the cancellation queues.
        expect((await page.goto(`${api.adminUrl}/admin/queues`))?.status()).toBe(200);
        await page.getByRole('link', { name: webhookQueueName }).first().waitFor({ timeout: 60_000 });
        await page.goto(`${api.adminUrl}/admin/queues/queue/${webhookQueueName}?status=completed`);
        await page.getByText(eventId).first().waitFor({ timeout: 60_000 });
      } finally {
        await context.close();
      }
    } finally {
      await receiver.close();
    }
  });
});

describe('/admin/queues read-only (DASHBOARD_WRITE unset)', () => {
  it('shows no write button, and refuses a write sent from the page itself', { timeout: 120_000 }, async () => {
    expect(env.config.DASHBOARD_WRITE).toBe(false);
    const queue = api.deps.producer.queues.forShard(null).queues[queueNames.bulk];
    // An hour's delay: it waits there, and a writable dashboard would offer to promote or clean it.
    const job = await queue.add('probe', {}, { jobId: 'browser-read-only-probe', delay: 3_600_000 });

    const { context } = await offlineContext(browser, {
      httpCredentials: { username: 'operator', password: env.config.ADMIN_TOKEN as string },
    });
    try {
      const page = await context.newPage();
      const response = await page.goto(`${api.adminUrl}/admin/queues/queue/${queueNames.bulk}?status=delayed`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      await page.getByText('browser-read-only-probe').first().waitFor({ timeout: 60_000 });
      for (const name of ['Promote', 'Clean', 'Promote all', 'Clean all', 'Pause', 'Empty', 'Add job']) {
        expect(await page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
      }

      // What a button would send (bull-board's own route), from the dashboard's origin with its credentials.
      const answer = await page.evaluate(async (path) => {
        const written = await fetch(path, { method: 'PUT', credentials: 'same-origin' });
        return { status: written.status, body: await written.json() };
      }, `/admin/queues/api/queues/${queueNames.bulk}/${job.id}/promote`);
      expect(answer).toEqual({
        status: 403,
        body: { errorCode: 4, errorMessage: 'The queue dashboard is read-only (DASHBOARD_WRITE)' },
      });
      expect(await job.getState()).toBe('delayed');
    } finally {
      await context.close();
      await job.remove();
    }
  });
});
