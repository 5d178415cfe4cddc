import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApi } from '../helpers/api.js';
import { requestCancellation } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { webhookCall } from '../helpers/merchant-webhook-calls.js';
import { ADMIN_AUTHORIZATION, issuePortalLink, openPortal, type PortalClient } from '../helpers/portal.js';
import { useTestContext } from '../helpers/test-context.js';

// The portal's walls, over HTTP with no browser: a link opens one session once, a session sees and acts
// on its own merchant's data only, every write needs the session's CSRF token, and nothing the portal
// answers carries a merchant's signing secret or webhook secret. No worker runs: the jobs stay queued,
// which the status, the abort and the event stream find through the queue as they would a running one.

const { env, api } = useTestContext({ settings: { WEBHOOK_ALLOW_PRIVATE: 'true' }, api: true });
let ours: MerchantFixture;
let theirs: MerchantFixture;
let portal: PortalClient;
let theirJob: string;
let theirEvent: string;
/** Every body the portal answered in this file, scanned for secrets at the end. */
const answered: string[] = [];
const secrets: string[] = [];

async function read(response: Response): Promise<{ status: number; body: any }> {
  const text = await response.text();
  answered.push(text);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body };
}

async function queuedBulkCancel(merchant: MerchantFixture): Promise<string> {
  const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
  const rewards = await createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configuration.id,
    rewards: [{ playerId: 'p1' }, { playerId: 'p2' }],
  });
  return requestCancellation(api, merchant, 'bulkCancel', { ids: rewards.map((reward) => reward.id) });
}

async function webhookWithTestEvent(merchant: MerchantFixture): Promise<string> {
  const put = await webhookCall(api.baseUrl, merchant, 'put', { url: 'http://127.0.0.1:9/hook' });
  expect(put.status, put.text).toBe(200);
  secrets.push(put.body.secret.slice('whsec_'.length));
  const sent = await webhookCall(api.baseUrl, merchant, 'test');
  expect(sent.status, sent.text).toBe(200);
  return sent.body.eventId;
}

beforeAll(async () => {
  ours = await createMerchant(env.db, { name: 'Our merchant' });
  theirs = await createMerchant(env.db, { name: 'Their merchant' });
  secrets.push(ours.secretKey, theirs.secretKey);
  theirJob = await queuedBulkCancel(theirs);
  theirEvent = await webhookWithTestEvent(theirs);
  await webhookWithTestEvent(ours);
  portal = await openPortal(api, await issuePortalLink(api, ours.id));
});

describe('portal links', () => {
  it('open one session however many requests use the link at once', async () => {
    const link = await issuePortalLink(api, ours.id);
    const answers = await Promise.all(Array.from({ length: 12 }, () => fetch(link.local, { redirect: 'manual' })));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, ...Array(11).fill(403)]);
    const cookies = answers.map((answer) => answer.headers.get('set-cookie')).filter(Boolean);
    expect(cookies).toHaveLength(1);
    const [row] = await env.db
      .selectFrom('portal_links')
      .selectAll()
      .where('expires_at', '=', new Date(link.expiresAt))
      .execute();
    expect(row?.used_at).toBeInstanceOf(Date);
  });

  it('are refused once expired, unknown, or used', async () => {
    const link = await issuePortalLink(api, ours.id);
    await env.db
      .updateTable('portal_links')
      .set({ expires_at: new Date(Date.now() - 1_000) })
      .where('expires_at', '=', new Date(link.expiresAt))
      .execute();
    const expired = await read(await fetch(link.local));
    expect(expired.status).toBe(403);
    expect(expired.body).toContain('This link does not open the portal');
    expect((await fetch(`${api.baseUrl}/portal/enter?token=not-a-token`)).status).toBe(403);
    expect((await fetch(`${api.baseUrl}/portal/enter`)).status).toBe(403);
  });

  it('keep only a hash of their token, and set a cookie the page cannot read, for /portal only', async () => {
    const link = await issuePortalLink(api, ours.id);
    const token = new URL(link.url).searchParams.get('token') as string;
    const stored = await env.db.selectFrom('portal_links').select('token_hash').execute();
    expect(JSON.stringify(stored)).not.toContain(token);
    const entered = await fetch(link.local, { redirect: 'manual' });
    const cookie = entered.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\/portal(;|$)/);
    expect(cookie).toMatch(/Max-Age=(28800|2879\d)(;|$)/);
    // PUBLIC_BASE_URL is unset in tests: http://localhost:<PORT>, plain http, so not Secure.
    expect(cookie).not.toMatch(/Secure/);
    expect(new URL(link.url).origin).toBe(`http://localhost:${env.config.PORT}`);
  });

  it('on an https PUBLIC_BASE_URL, are addressed there and their cookie is Secure', async () => {
    const https = await startTestApi(env, { config: { ...env.config, PUBLIC_BASE_URL: 'https://rewards.example' } });
    try {
      const link = await issuePortalLink(https, ours.id);
      expect(link.url).toMatch(/^https:\/\/rewards\.example\/portal\/enter\?token=[\w-]{43}$/);
      expect((await fetch(link.local, { redirect: 'manual' })).headers.get('set-cookie')).toMatch(/; Secure/);
    } finally {
      await https.close();
    }
  });
});

describe('a portal session', () => {
  it("reads its own merchant's data only: another merchant's job and event are unknown", async () => {
    const session = await read(await portal.request('/portal/api/session'));
    expect(session.body.merchant).toEqual({ id: ours.id, name: 'Our merchant' });
    for (const path of ['', '/rewards', '/unapplied', '/report', '/events']) {
      const answer = await read(await portal.request(`/portal/api/jobs/${theirJob}${path}`));
      expect(answer.status, path).toBe(404);
    }
    // Nothing the request names chooses the merchant: a merchantId in the query is not read.
    const listed = await read(await portal.request(`/portal/api/jobs?merchantId=${theirs.id}`));
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(theirJob);
    const deliveries = await read(await portal.request(`/portal/api/webhook/deliveries?limit=100`));
    expect(deliveries.body.deliveries.length).toBe(1);
    expect(JSON.stringify(deliveries.body)).not.toContain(theirEvent);
  });

  it("cannot act on another merchant's job or event", async () => {
    const abort = await read(await portal.request(`/portal/api/jobs/${theirJob}/abort`, { method: 'POST' }));
    expect(abort.status).toBe(404);
    const redeliver = await read(
      await portal.request(`/portal/api/webhook/deliveries/${theirEvent}/redeliver`, { method: 'POST' }),
    );
    expect(redeliver.status).toBe(404);
    // Their job is as it was: still queued, not aborted.
    const status = await webhookCall(api.baseUrl, theirs, 'deliveries', { limit: 100 });
    expect(status.body.deliveries.map((entry: { eventId: string }) => entry.eventId)).toContain(theirEvent);
    const job = await fetch(`${api.adminUrl}/admin/v1/jobs/${theirJob}`, { headers: ADMIN_AUTHORIZATION });
    expect(((await job.json()) as { state: string }).state).toBe('queued');
  });

  it('writes only with its own CSRF token', async () => {
    const other = await openPortal(api, await issuePortalLink(api, ours.id));
    for (const csrfToken of [null, 'wrong', other.csrfToken]) {
      const answer = await read(await portal.request('/portal/api/webhook/test', { method: 'POST', csrfToken }));
      expect(answer.status, String(csrfToken)).toBe(403);
      expect(answer.body.errorMessage).toBe('Missing or wrong CSRF token');
    }
    const sent = await read(await portal.request('/portal/api/webhook/test', { method: 'POST' }));
    expect(sent.status).toBe(200);
    expect(sent.body.eventId).toMatch(/^msg_/);
  });

  it('aborts its own job and redelivers its own event, each audited as the session', async () => {
    const job = await queuedBulkCancel(ours);
    const aborted = await read(await portal.request(`/portal/api/jobs/${job}/abort`, { method: 'POST' }));
    expect(aborted.status).toBe(200);
    expect(aborted.body.state).toBe('cancelled');
    const { body } = await read(await portal.request('/portal/api/webhook/deliveries?limit=1'));
    const eventId = body.deliveries[0].eventId;
    const redelivered = await read(
      await portal.request(`/portal/api/webhook/deliveries/${eventId}/redeliver`, { method: 'POST' }),
    );
    expect(redelivered.status).toBe(200);
    const { sessionId } = (await read(await portal.request('/portal/api/session'))).body;
    const audit = await env.db
      .selectFrom('admin_audit_log')
      .select(['operator', 'action', 'target'])
      .where('operator', '=', `portal:${sessionId}`)
      .orderBy('id')
      .execute();
    expect(audit.map((row) => row.action)).toEqual(
      expect.arrayContaining(['portal.session.open', 'job.abort', 'webhook.redeliver', 'webhook.test']),
    );
    expect(audit.find((row) => row.action === 'job.abort')?.target).toBe(job);
    const issued = await env.db
      .selectFrom('admin_audit_log')
      .select(['operator', 'target'])
      .where('action', '=', 'portal.link.create')
      .execute();
    expect(issued[0]).toEqual({ operator: 'admin', target: ours.id });
  });
});

describe('the operator', () => {
  const sessionsPath = (merchantId: string) => `${api.adminUrl}/admin/v1/merchants/${merchantId}/portal-sessions`;

  it("lists a merchant's sessions and revokes one: its next request is refused, page and API alike", async () => {
    const client = await openPortal(api, await issuePortalLink(api, ours.id));
    const { sessionId } = (await read(await client.request('/portal/api/session'))).body;
    const listed = (await (await fetch(sessionsPath(ours.id), { headers: ADMIN_AUTHORIZATION })).json()) as {
      sessions: { id: string; active: boolean; revokedAt: number | null }[];
    };
    expect(listed.sessions.find((entry) => entry.id === sessionId)).toMatchObject({ active: true, revokedAt: null });
    // Not theirs to list: the other merchant's list does not hold it, and revoking it there is a 404.
    const theirList = (await (await fetch(sessionsPath(theirs.id), { headers: ADMIN_AUTHORIZATION })).json()) as {
      sessions: unknown[];
    };
    expect(theirList.sessions).toEqual([]);
    const wrongMerchant = await fetch(`${sessionsPath(theirs.id)}/${sessionId}`, {
      method: 'DELETE',
      headers: ADMIN_AUTHORIZATION,
    });
    expect(wrongMerchant.status).toBe(404);
    expect((await fetch(`${sessionsPath(ours.id)}/${sessionId}`, { method: 'DELETE' })).status).toBe(401);

    const revoked = await fetch(`${sessionsPath(ours.id)}/${sessionId}`, {
      method: 'DELETE',
      headers: ADMIN_AUTHORIZATION,
    });
    expect(revoked.status).toBe(204);
    expect((await client.request('/portal/api/jobs')).status).toBe(401);
    expect((await client.request('/portal/api/webhook/test', { method: 'POST' })).status).toBe(401);
    const page = await read(await client.request('/portal'));
    expect(page.status).toBe(401);
    expect(page.body).toContain('Your portal session has ended');

    const after = (await (await fetch(sessionsPath(ours.id), { headers: ADMIN_AUTHORIZATION })).json()) as {
      sessions: { id: string; active: boolean; revokedBy: string | null }[];
    };
    expect(after.sessions.find((entry) => entry.id === sessionId)).toMatchObject({ active: false, revokedBy: 'admin' });
    const audit = await env.db
      .selectFrom('admin_audit_log')
      .select(['operator', 'target'])
      .where('action', '=', 'portal.session.revoke')
      .execute();
    expect(audit).toEqual([{ operator: 'admin', target: sessionId }]);
  });

  it('issues links only with an admin token, on the admin listener, for a merchant that exists', async () => {
    const path = `/admin/v1/merchants/${ours.id}/portal-links`;
    expect((await fetch(`${api.adminUrl}${path}`, { method: 'POST' })).status).toBe(401);
    expect((await fetch(`${api.baseUrl}${path}`, { method: 'POST', headers: ADMIN_AUTHORIZATION })).status).toBe(404);
    const unknown = await fetch(`${api.adminUrl}/admin/v1/merchants/${crypto.randomUUID()}/portal-links`, {
      method: 'POST',
      headers: ADMIN_AUTHORIZATION,
    });
    expect(unknown.status).toBe(404);
  });
});

describe('every answer of the portal', () => {
  it('carries no merchant secret and no webhook secret', async () => {
    // The pages and assets too, not only the JSON already gathered above.
    const shell = await read(await portal.request('/portal'));
    expect(shell.status).toBe(200);
    for (const src of String(shell.body).match(/\/portal\/assets\/[\w./-]+/g) ?? []) {
      answered.push(await (await fetch(`${api.baseUrl}${src}`)).text());
    }
    for (const path of [
      '/portal/api/session',
      '/portal/api/jobs',
      '/portal/api/webhook',
      '/portal/api/webhook/deliveries',
    ]) {
      expect((await read(await portal.request(path))).status, path).toBe(200);
    }
    expect(answered.length).toBeGreaterThan(20);
    expect(secrets).toHaveLength(4);
    for (const body of answered) for (const secret of secrets) expect(body).not.toContain(secret);
  });

  it('comes with the strict Content-Security-Policy, no framing and no caching of data', async () => {
    const page = await portal.request('/portal');
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect((await portal.request('/portal/api/jobs')).headers.get('cache-control')).toBe('no-store');
    const refused = await fetch(`${api.baseUrl}/portal/api/jobs`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});
