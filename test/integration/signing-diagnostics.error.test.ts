import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signMessage } from '../../src/api/auth/signature.js';
import { createMerchant } from '../helpers/fixtures.js';
import { bodyBoundHeaders } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * A refused signature says which of the merchant's mistakes it is, with errorCode 2
 * and 3 unchanged, and errorCode 3 says the server's time.
 */

const { env, api } = useTestContext({ api: true });
const READ_ALL = '/api/v1/integration/reward-configurations/readAll';

async function refusal(response: Response, status: number, errorCode: number): Promise<string> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { errorCode: number; errorMessage: string };
  expect(body.errorCode).toBe(errorCode);
  return body.errorMessage;
}

describe('timestamp spellings a merchant library may produce', () => {
  it('names a JSON number written in exponent form (Java Double.toString) that was signed as written', async () => {
    const merchant = await createMerchant(env.db);
    const now = Math.floor(Date.now() / 100_000) * 100_000; // few significant digits: exact in exponent form
    const written = `${now / 1e12}E12`;
    expect(Number(written)).toBe(now);
    const hash = createHmac('sha256', merchant.secretKey).update(`${merchant.id}${written}`).digest('hex');
    const body = `{"merchantId":"${merchant.id}","timestamp":${written},"hash":"${hash}"}`;
    const message = await refusal(await api.post(READ_ALL, body), 401, 2);
    expect(message).toContain(`timestamp is written ${written} in the body`);
    expect(message).toContain(`"${now}"`);
  });

  it('names a JSON number with a fraction (a Python float)', async () => {
    const merchant = await createMerchant(env.db);
    const now = Date.now();
    const hash = createHmac('sha256', merchant.secretKey).update(`${merchant.id}${now}.0`).digest('hex');
    const body = `{"merchantId":"${merchant.id}","timestamp":${now}.0,"hash":"${hash}"}`;
    const message = await refusal(await api.post(READ_ALL, body), 401, 2);
    expect(message).toContain(`timestamp is written ${now}.0 in the body`);
  });

  it('still serves the same number written as plain digits', async () => {
    const merchant = await createMerchant(env.db);
    const now = Date.now();
    const body = `{"merchantId":"${merchant.id}","timestamp":${now},"hash":"${signMessage(merchant.id, now, merchant.secretKey)}"}`;
    expect((await api.post(READ_ALL, body)).status).toBe(200);
  });

  it('refuses a string timestamp with a fraction as 400, saying what was sent and what is wanted', async () => {
    const merchant = await createMerchant(env.db);
    const timestamp = `${Date.now()}.0`;
    const body = { merchantId: merchant.id, timestamp, hash: signMessage(merchant.id, timestamp, merchant.secretKey) };
    const message = await refusal(await api.post(READ_ALL, body), 400, 1);
    expect(message).toMatch(/^timestamp: /);
    expect(message).toContain(`got "${timestamp}"`);
    expect(message).toContain('a string of up to 16 decimal digits');
  });
});

describe('errorCode 3 says the server time', () => {
  it('in its message and in the Date header', async () => {
    const merchant = await createMerchant(env.db);
    const sent = Date.now() - 3_600_000;
    const before = Date.now();
    const response = await api.post(READ_ALL, {
      merchantId: merchant.id,
      timestamp: sent,
      hash: signMessage(merchant.id, sent, merchant.secretKey),
    });
    const after = Date.now();
    const date = Date.parse(response.headers.get('date') ?? '');
    expect(date).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(date).toBeLessThanOrEqual(after);
    const message = await refusal(response, 401, 3);
    const serverTime = Number(/server time (\d+)/.exec(message)?.[1]);
    expect(serverTime).toBeGreaterThanOrEqual(before);
    expect(serverTime).toBeLessThanOrEqual(after);
    expect(message).toContain(`timestamp ${sent} is ${serverTime - sent} ms behind`);
    expect(message).toContain('±300000 ms');
  });
});

describe('signature version 2', () => {
  it('says what X-Signature signs when it does not match, without echoing the query', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const now = Date.now();
    const body = JSON.stringify({
      merchantId: merchant.id,
      timestamp: now,
      hash: signMessage(merchant.id, now, merchant.secretKey),
    });
    const wrongPath = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: '/elsewhere', body }, { t: now });
    const message = await refusal(await api.post(READ_ALL, body, wrongPath), 401, 2);
    expect(message).toContain(
      `"${now}.POST.${READ_ALL}." followed by the ${Buffer.byteLength(body)} bytes of the body`,
    );
    expect(await refusal(await api.post(READ_ALL, body), 401, 2)).toContain('X-Signature header missing');
    expect(await refusal(await api.post(READ_ALL, body, { 'x-signature': 't=1,v1=zz' }), 401, 2)).toContain(
      'X-Signature must be t=<epoch ms>,v1=<64 hex>',
    );
  });
});
