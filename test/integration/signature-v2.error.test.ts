import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signMessage } from '../../src/api/auth/signature.js';
import { createMerchant } from '../helpers/fixtures.js';
import { bodyBoundHeaders, type MerchantCredentials, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

// How a version 2 merchant's request is refused: the X-Signature header missing, malformed, wrong or
// stale, and the interface's own fields still checked as before.

const { env, api } = useTestContext({ api: true });

const READ_ALL = '/api/v1/integration/reward-configurations/readAll';
const WINDOW_MS = 300_000;

async function expectError(response: Response, status: number, errorCode: number): Promise<unknown> {
  expect(response.status).toBe(status);
  const body = await response.json();
  expect(body).toMatchObject({ errorCode });
  return body;
}

/** A readAll body (as sent) and the header over it; `t` and the body's timestamp may differ. */
function readAllRequest(merchant: MerchantCredentials, options: { t?: number; timestamp?: number } = {}) {
  const body = JSON.stringify(signedBody(merchant, {}, options.timestamp));
  const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: READ_ALL, body }, options);
  return { body, headers, digest: headers['x-signature']?.split(',v1=')[1] as string };
}

describe('a version 2 merchant', () => {
  it('is served with a good X-Signature (the baseline of the cases below)', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const { body, headers } = readAllRequest(merchant);
    expect((await api.post(READ_ALL, body, headers)).status).toBe(200);
  });

  it('gets 401 errorCode 2 for a missing, malformed or wrong X-Signature, the message saying which', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const { body, digest } = readAllRequest(merchant, { t: 1_763_679_600_000 });
    const t = Date.now();
    const good = readAllRequest(merchant, { t }).headers['x-signature'] as string;
    const headerCases: Array<Record<string, string>> = [
      {},
      { 'x-signature': '' },
      { 'x-signature': 'garbage' },
      { 'x-signature': `v1=${digest},t=${t}` }, // order
      { 'x-signature': `t=${t}` },
      { 'x-signature': `v1=${digest}` },
      { 'x-signature': `t=${t},v1=${digest.slice(1)}` }, // 63 digits: leading zeros are not optional here
      { 'x-signature': `t=${t},v1=${digest}00` },
      { 'x-signature': `t=${t},v1=${'z'.repeat(64)}` },
      { 'x-signature': `t=-${t},v1=${digest}` },
      { 'x-signature': `t=${t}.5,v1=${digest}` },
      { 'x-signature': `t=${'9'.repeat(17)},v1=${digest}` },
      { 'x-signature': `${good},v1=${digest}` }, // a second digest
      { 'x-signature': `t=${t},v1=${digest}` }, // the digest of another t
      { 'x-signature': `t=${t},v1=${'0'.repeat(64)}` },
    ];
    const messages: string[] = [];
    for (const headers of headerCases) {
      const answer = (await expectError(await api.post(READ_ALL, body, headers), 401, 2)) as { errorMessage: string };
      messages.push(answer.errorMessage);
    }
    const missing = /X-Signature header missing/;
    const malformed = /X-Signature must be t=<epoch ms>,v1=<64 hex>/;
    const wrong = /X-Signature does not match/;
    const kinds = [missing, ...Array(12).fill(malformed), wrong, wrong] as RegExp[];
    // An empty header is as good as none to the HTTP layer, or a malformed one: either message is right.
    expect(messages[1]).toMatch(/X-Signature (header missing|must be)/);
    messages.forEach((message, index) => {
      if (index !== 1) expect(message, JSON.stringify(headerCases[index])).toMatch(kinds[index] as RegExp);
    });
  });

  it('answers 401 errorCode 3 to a good X-Signature whose t is outside the window, either way', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    for (const t of [Date.now() - WINDOW_MS - 60_000, Date.now() + WINDOW_MS + 60_000]) {
      const { body, headers } = readAllRequest(merchant, { t });
      await expectError(await api.post(READ_ALL, body, headers), 401, 3);
    }
  });

  it('answers errorCode 2, not 3, to a wrong X-Signature with a stale t', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const t = Date.now() - WINDOW_MS - 60_000;
    const { body } = readAllRequest(merchant, { t });
    const wrong = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: READ_ALL, body }, { t, secretKey: 'x' });
    await expectError(await api.post(READ_ALL, body, wrong), 401, 2);
  });

  it("still checks the interface's fields: a wrong hash is errorCode 2, a stale timestamp errorCode 3", async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const wrongHash = JSON.stringify({ merchantId: merchant.id, timestamp: Date.now(), hash: 'ab'.repeat(32) });
    const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: READ_ALL, body: wrongHash });
    await expectError(await api.post(READ_ALL, wrongHash, headers), 401, 2);

    const stale = readAllRequest(merchant, { timestamp: Date.now() - WINDOW_MS - 60_000, t: Date.now() });
    await expectError(await api.post(READ_ALL, stale.body, stale.headers), 401, 3);
  });

  it('answers 400 to malformed JSON and to missing signing fields, as for any merchant', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const malformed = `{"merchantId":"${merchant.id}",`;
    const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: READ_ALL, body: malformed });
    await expectError(await api.post(READ_ALL, malformed, headers), 400, 1);
    const noHash = JSON.stringify({ merchantId: merchant.id, timestamp: Date.now() });
    const noHashHeaders = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: READ_ALL, body: noHash });
    await expectError(await api.post(READ_ALL, noHash, noHashHeaders), 400, 1);
  });

  it('is refused when disabled, even with a good X-Signature', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2, status: 'DISABLED' });
    const { body, headers } = readAllRequest(merchant);
    await expectError(await api.post(READ_ALL, body, headers), 401, 2);
  });
});

describe('merchants not on version 2', () => {
  it('a version 1 merchant is served without X-Signature, and a malformed or wrong one is ignored', async () => {
    const merchant = await createMerchant(env.db);
    const body = JSON.stringify(signedBody(merchant));
    const headerCases: Array<Record<string, string>> = [
      {},
      { 'x-signature': 'garbage' },
      { 'x-signature': `t=1,v1=${'0'.repeat(64)}` },
    ];
    for (const headers of headerCases) {
      expect((await api.post(READ_ALL, body, headers)).status).toBe(200);
    }
    // Its own errors are unchanged.
    const wrong = { merchantId: merchant.id, timestamp: Date.now(), hash: signMessage(merchant.id, 1, 'x') };
    await expectError(await api.post(READ_ALL, wrong), 401, 2);
  });

  it('an unknown merchant with a well-formed X-Signature is errorCode 2', async () => {
    const stranger = { id: randomUUID(), secretKey: 'whatever' };
    const { body, headers } = readAllRequest(stranger);
    await expectError(await api.post(READ_ALL, body, headers), 401, 2);
  });
});
