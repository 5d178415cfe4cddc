import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, offlineContext } from '../helpers/browser.js';
import { requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { webhookCall } from '../helpers/merchant-webhook-calls.js';
import { ADMIN_AUTHORIZATION, issuePortalLink } from '../helpers/portal.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually, startTestWorker, type TestWorker } from '../helpers/worker.js';

// The merchant portal in a real (headless) Chromium, offline, against the real API, worker and a real
// webhook receiver. With PORTAL_SCREENSHOTS set (`npm run portal:screenshots`), the main views are also
// saved as PNG there for docs/portal.md.

const SCREENSHOTS = process.env.PORTAL_SCREENSHOTS;
const PHONE = { width: 390, height: 844 };

const { env, api } = useTestContext({
  settings: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.0001' },
  api: true,
});
// Started by the first test, once its job is seen waiting.
let worker: TestWorker | undefined;
let browser: Browser;
let receiver: WebhookReceiver;
let merchant: MerchantFixture;
let other: MerchantFixture;
let webhookSecret: string;
let bulkJob: string;
let context: BrowserContext;
let page: Page;
const policyViolations: string[] = [];

async function rewardsFor(owner: MerchantFixture, count: number, prefix: string) {
  const configuration = await createConfiguration(env.db, { merchantId: owner.id, startDate: Date.now() });
  return createRewards(env.db, {
    merchantId: owner.id,
    rewardConfigurationId: configuration.id,
    rewards: Array.from({ length: count }, (_, index) => ({
      playerId: `${prefix}-player-${index}`,
      externalId: `${prefix}-${index}`,
    })),
  });
}

async function screenshot(name: string, target: Page = page): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await target.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
}

/** A fresh browser context that opens a new link of `owner`'s; answers its page on /portal. */
async function enterPortal(owner: MerchantFixture, viewport = { width: 1280, height: 900 }) {
  const opened = await offlineContext(browser, { viewport });
  const tab = await opened.context.newPage();
  tab.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) policyViolations.push(message.text());
  });
  await tab.goto((await issuePortalLink(api, owner.id)).local);
  await tab.waitForURL(`${api.baseUrl}/portal`);
  await tab.getByRole('heading', { name: 'Jobs', level: 1 }).waitFor();
  return { context: opened.context, page: tab, blocked: opened.blocked };
}

beforeAll(async () => {
  browser = await launchChromium();
  receiver = await startWebhookReceiver();
  merchant = await createMerchant(env.db, { name: 'Acme Bets' });
  other = await createMerchant(env.db, { name: 'Other Bets' });
  const put = await webhookCall(api.baseUrl, merchant, 'put', { url: `${receiver.url}/hooks` });
  expect(put.status, put.text).toBe(200);
  webhookSecret = put.body.secret;
  ({ context, page } = await enterPortal(merchant));
}, 120_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await worker?.close();
  await receiver?.close();
});

describe('the merchant portal in a browser', () => {
  it('follows a job from queued to its end, live, then lists what it cancelled page by page', {
    timeout: 120_000,
  }, async () => {
    const rewards = await rewardsFor(merchant, 25, 'acme');
    const ids = rewards.map((reward) => reward.id);
    bulkJob = await requestCancellation(api, merchant, 'bulkCancel', { ids, externalIds: ['no-such-reward'] });
    // No worker yet: the job waits in its queue, and the page shows it so.
    await page.goto(`${api.baseUrl}/portal/jobs/${bulkJob}`);
    await expect.poll(() => page.locator('#job-state').textContent()).toBe('queued');
    await expect.poll(() => page.getByRole('button', { name: 'Abort job' }).count()).toBe(1);

    worker = await startTestWorker(env);
    // The event stream brings the end, with no reload.
    await page.locator('#job-state').getByText('completed').waitFor({ timeout: 60_000 });
    await expect.poll(() => page.locator('#job-summary progress').getAttribute('value')).toBe('100');
    await expect.poll(() => page.locator('#job-summary').textContent()).toContain('cancelled25');
    expect(await page.getByRole('button', { name: 'Abort job' }).count()).toBe(0);
    // The actions of a finished job are the report and its deliveries, nothing else (no stray text).
    await expect
      .poll(() => page.locator('#job-actions').evaluate((actions) => actions.textContent))
      .toBe('Download reportWebhook deliveries of this job');

    const rewardsSection = page.locator('#rewards');
    // Read again at the job's end: the first page is whole.
    await expect.poll(() => rewardsSection.locator('tbody tr').count()).toBe(10);
    await rewardsSection.getByText('Page 1', { exact: true }).waitFor();
    const firstPage = await rewardsSection.locator('tbody tr').allTextContents();
    expect(firstPage).toHaveLength(10);
    await rewardsSection.getByRole('button', { name: 'Next page' }).click();
    await rewardsSection.getByText('Page 2', { exact: true }).waitFor();
    const secondPage = await rewardsSection.locator('tbody tr').allTextContents();
    expect(secondPage).toHaveLength(10);
    expect(secondPage.some((row) => firstPage.includes(row))).toBe(false);
    await rewardsSection.getByRole('button', { name: 'Next page' }).click();
    await rewardsSection.getByText('Page 3', { exact: true }).waitFor();
    expect(await rewardsSection.locator('tbody tr').count()).toBe(5);
    expect(await rewardsSection.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.locator('#unapplied').getByText('no-such-reward').waitFor();
    await screenshot('job-detail');
  });

  it('downloads the report of the finished job', { timeout: 60_000 }, async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download report' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`job-${bulkJob}.ndjson`);
    const text = readFileSync((await download.path()) as string, 'utf8');
    const lines = text.trimEnd().split('\n');
    const summary = JSON.parse(lines.at(-1) as string).summary;
    expect(summary).toMatchObject({ jobId: bulkJob, lines: 26, cancelled: 25, notFound: 1 });
    const body = text.slice(0, text.lastIndexOf('{"summary"'));
    expect(createHash('sha256').update(body).digest('hex')).toBe(summary.sha256);
  });

  it('lists the jobs newest first, filters them by kind and state, and pages them', { timeout: 120_000 }, async () => {
    const singles = await rewardsFor(merchant, 11, 'single');
    for (const reward of singles) {
      await waitForJob(api, merchant, await requestCancellation(api, merchant, 'cancel', { id: reward.id }));
    }
    await page.getByRole('link', { name: 'Jobs' }).click();
    await page.getByRole('heading', { name: 'Jobs', level: 1 }).waitFor();
    // 12 jobs, 10 a page: the newest first, the bulk job (the oldest) on the second page.
    await expect.poll(() => page.locator('#jobs tbody tr').count()).toBe(10);
    expect(await page.locator('#jobs tbody tr').first().textContent()).toContain('cancel');
    await page.getByRole('link', { name: 'Next page' }).click();
    await expect.poll(() => page.locator('#jobs tbody tr').count()).toBe(2);
    await page.getByRole('link', { name: `Job ${bulkJob}` }).waitFor();

    // With the keyboard: choose the kind, then Enter on the button.
    await page.getByLabel('Kind').selectOption('bulkCancel');
    await page.getByRole('button', { name: 'Apply filter' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`${api.baseUrl}/portal?kind=bulkCancel`);
    await expect.poll(() => page.locator('#jobs tbody tr').count()).toBe(1);
    expect(await page.locator(`#jobs tr[data-job-id="${bulkJob}"]`).count()).toBe(1);
    await screenshot('jobs');

    await page.getByLabel('State').selectOption('failed');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await page.locator('#no-jobs').waitFor();
    // Back returns to the previous filter.
    await page.goBack();
    await expect.poll(() => page.locator('#jobs tbody tr').count()).toBe(1);
  });

  it('redelivers an event to the real receiver, signed, and sends a test event', { timeout: 60_000 }, async () => {
    // From the job's page: its deliveries (the delivery log filtered by the job).
    await page.goto(`${api.baseUrl}/portal/jobs/${bulkJob}`);
    await page.getByRole('link', { name: 'Webhook deliveries of this job' }).click();
    await page.waitForURL(`${api.baseUrl}/portal/webhook?jobId=${bulkJob}`);
    await page.locator('#endpoint-url').getByText(`${receiver.url}/hooks`).waitFor();
    const completed = await eventually(
      async () => receiver.received.find((request) => request.body.includes(bulkJob)),
      {
        what: 'the job.completed delivery',
      },
    );
    const eventId = completed.headers['webhook-id'] as string;
    await page.reload();
    const row = page.locator(`#deliveries tr[data-event-id="${eventId}"]`);
    await row.getByText('delivered').waitFor();
    await row.getByRole('button', { name: `Redeliver ${eventId}` }).click();
    await page.locator('#webhook-message').getByText(`Event ${eventId} queued to be sent again.`).waitFor();
    const again = await eventually(
      async () => (receiver.withId(eventId).length === 2 ? receiver.withId(eventId)[1] : undefined),
      {
        what: 'the redelivery',
      },
    );
    expect(new Webhook(webhookSecret).verify(again.body, again.headers as Record<string, string>)).toMatchObject({
      type: 'job.completed',
    });

    // The log shows both attempts once the second is answered.
    await page.reload();
    await row.locator('summary').getByText('2 attempts').waitFor();
    await row.locator('summary').click();
    await screenshot('webhook');

    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page
      .locator('#webhook-message')
      .getByText(/^Test event msg_.+ queued\.$/)
      .waitFor();
    const test = await eventually(
      async () => receiver.received.find((request) => request.body.includes('webhook.test')),
      { what: 'the test event' },
    );
    expect(new Webhook(webhookSecret).verify(test.body, test.headers as Record<string, string>)).toBeTruthy();
    await page.getByRole('link', { name: 'all events' }).click();
    await page.locator('#deliveries').getByText('webhook.test').first().waitFor();
  });

  it("shows another merchant's job id in the address as not found", { timeout: 60_000 }, async () => {
    const [reward] = await rewardsFor(other, 1, 'other');
    const theirs = await requestCancellation(api, other, 'cancel', { id: reward?.id });
    await waitForJob(api, other, theirs);
    await page.goto(`${api.baseUrl}/portal/jobs/${theirs}`);
    await page.getByRole('heading', { name: 'Job not found' }).waitFor();
    expect(await page.locator('main').textContent()).not.toContain(theirs);
  });

  it('is readable on a phone: nothing wider than the screen but the tables, which scroll', {
    timeout: 60_000,
  }, async () => {
    const phone = await enterPortal(merchant, PHONE);
    try {
      await phone.page.locator('#jobs').waitFor();
      const width = Number(await phone.page.evaluate('document.documentElement.scrollWidth'));
      expect(width).toBeLessThanOrEqual(PHONE.width);
      await screenshot('jobs-phone', phone.page);
      expect(phone.blocked).toEqual([]);
    } finally {
      await phone.context.close();
    }
  });

  it('ran without a Content-Security-Policy violation or a request off this machine', () => {
    expect(policyViolations).toEqual([]);
  });
});

describe('the portal refuses', () => {
  it('an expired link and a used link', { timeout: 60_000 }, async () => {
    const tab = await context.newPage();
    const used = await issuePortalLink(api, merchant.id);
    await fetch(used.local);
    await tab.goto(used.local);
    await tab.getByRole('heading', { name: 'This link does not open the portal' }).waitFor();

    const expired = await issuePortalLink(api, merchant.id);
    await env.db
      .updateTable('portal_links')
      .set({ expires_at: new Date(Date.now() - 1) })
      .where('used_at', 'is', null)
      .execute();
    const fresh = await offlineContext(browser);
    try {
      const response = await (await fresh.context.newPage()).goto(expired.local);
      expect(response?.status()).toBe(403);
      expect(await response?.text()).toContain('It has expired, or it has been used already.');
    } finally {
      await fresh.context.close();
    }
    await tab.close();
  });

  it('a session the operator revoked, at its next request', { timeout: 60_000 }, async () => {
    const revoked = await enterPortal(merchant);
    try {
      const sessionId = String(
        await revoked.page.evaluate(
          "fetch('/portal/api/session').then((answer) => answer.json()).then((session) => session.sessionId)",
        ),
      );
      const answer = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchant.id}/portal-sessions/${sessionId}`, {
        method: 'DELETE',
        headers: ADMIN_AUTHORIZATION,
      });
      expect(answer.status).toBe(204);
      // The page already open finds out at its next call; a new load is refused outright.
      await revoked.page.getByRole('link', { name: 'Webhook' }).click();
      await revoked.page.getByRole('heading', { name: 'Your portal session has ended' }).waitFor();
      await revoked.page.reload();
      await revoked.page.getByRole('heading', { name: 'Your portal session has ended' }).waitFor();
    } finally {
      await revoked.context.close();
    }
  });
});
