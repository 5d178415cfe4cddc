import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureHeaderValue } from '../../src/api/auth/signature.js';
import { createMerchant, createSession, type MerchantOptions } from '../helpers/fixtures.js';
import { bodyBoundHeaders, type MerchantCredentials, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

// What body-bound signatures (version 2) are for: a signature seen on one request cannot sign
// another. Each case sends what an attacker holding a captured request could send.

const { env, api } = useTestContext({ api: true });

const BULK_CANCEL = '/api/v1/integration/rewards/bulkCancel';
const CANCEL = '/api/v1/integration/rewards/cancel';

const v2Merchant = (options: MerchantOptions = {}) => createMerchant(env.db, { signatureVersion: 2, ...options });

async function expectRefused(response: Response, errorCode = 2): Promise<void> {
  expect(response.status).toBe(401);
  expect(response.headers.get('x-job-id')).toBeNull();
  expect(await response.json()).toMatchObject({ errorCode });
}

/** A GET /betSlip as the merchant sends it: its query string and its X-Signature. */
async function capturedBetSlip(merchant: MerchantCredentials) {
  const session = await createSession(env.db, { merchantId: merchant.id, playerId: `player-${randomUUID()}` });
  const fields = signedBody(merchant, { authToken: session.token });
  const query = new URLSearchParams(
    Object.entries(fields).map(([key, value]): [string, string] => [key, String(value)]),
  ).toString();
  const pathWithQuery = `/betSlip?${query}`;
  const headers = bodyBoundHeaders(merchant, { method: 'GET', pathWithQuery, body: '' });
  const served = await api.get(pathWithQuery, headers);
  expect(served.status).toBe(200);
  expect(await served.json()).toMatchObject({ errorCode: 0 });
  return { fields, headers };
}

describe('a signature captured from GET /betSlip', () => {
  it('cannot sign a bulkCancel of a version 1 merchant: the URL bound its triple (401, nothing queued)', async () => {
    const merchant = await createMerchant(env.db);
    const { fields } = await capturedBetSlip(merchant);
    const forged = {
      merchantId: fields.merchantId,
      timestamp: fields.timestamp,
      hash: fields.hash,
      ids: [randomUUID()],
    };
    await expectRefused(await api.post(BULK_CANCEL, forged));
  });

  it('cannot sign a bulkCancel of a version 2 merchant, with or without the captured X-Signature', async () => {
    const merchant = await v2Merchant();
    const { fields, headers } = await capturedBetSlip(merchant);
    const forged = {
      merchantId: fields.merchantId,
      timestamp: fields.timestamp,
      hash: fields.hash,
      ids: [randomUUID()],
    };
    await expectRefused(await api.post(BULK_CANCEL, forged));
    await expectRefused(await api.post(BULK_CANCEL, forged, headers));
    // Nor a header made up with the captured t and digest in another shape.
    const [t, digest] = headers['x-signature']?.split(',') ?? [];
    await expectRefused(await api.post(BULK_CANCEL, forged, { 'x-signature': `${digest},${t}` }));
  });

  it('cannot serve another query on GET /betSlip (another token, or an added parameter)', async () => {
    const merchant = await v2Merchant();
    const { fields, headers } = await capturedBetSlip(merchant);
    const other = await createSession(env.db, { merchantId: merchant.id, playerId: `player-${randomUUID()}` });
    const withOtherToken = new URLSearchParams({
      merchantId: String(fields.merchantId),
      timestamp: String(fields.timestamp),
      hash: String(fields.hash),
      authToken: other.token,
    });
    await expectRefused(await api.get(`/betSlip?${withOtherToken}`, headers));
    const query = new URLSearchParams(
      Object.entries(fields).map(([key, value]): [string, string] => [key, String(value)]),
    );
    await expectRefused(await api.get(`/betSlip?${query}&extra=1`, headers));
  });
});

describe('an X-Signature over one request', () => {
  it('does not sign another body on the same route', async () => {
    const merchant = await v2Merchant();
    const signedText = JSON.stringify(signedBody(merchant, { ids: [randomUUID()] }));
    const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: BULK_CANCEL, body: signedText });
    const fields = JSON.parse(signedText) as Record<string, unknown>;
    await expectRefused(await api.post(BULK_CANCEL, JSON.stringify({ ...fields, ids: [randomUUID()] }), headers));
    // The signed request itself is served: the refusal was for the other body.
    expect((await api.post(BULK_CANCEL, signedText, headers)).status).toBe(200);
  });

  it('does not sign the same body on another path', async () => {
    const merchant = await v2Merchant();
    const body = JSON.stringify(signedBody(merchant, { id: randomUUID() }));
    const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: CANCEL, body });
    await expectRefused(await api.post(BULK_CANCEL, body, headers));
    await expectRefused(await api.post(`${CANCEL}?x=1`, body, headers));
  });

  it('covers the bytes received, not a re-serialisation of what they parse to', async () => {
    const merchant = await v2Merchant();
    const fields = signedBody(merchant, { id: randomUUID() });
    const sent = `{\n  "merchantId": "${fields.merchantId}",\n  "timestamp": ${fields.timestamp},\n  "hash": "${fields.hash}",\n  "id": "${fields.id}"\n}\n`;
    const compact = JSON.stringify(JSON.parse(sent));
    await expectRefused(
      await api.post(
        CANCEL,
        sent,
        bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: CANCEL, body: compact }),
      ),
    );
    const served = await api.post(
      CANCEL,
      sent,
      bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: CANCEL, body: sent }),
    );
    expect(served.status).toBe(200);
  });

  it('covers the bytes received even where they are not valid UTF-8 (no decoding before the hash)', async () => {
    const merchant = await v2Merchant();
    const fields = signedBody(merchant, { externalId: 'reward-\u0000' });
    // 0xFF is no UTF-8: decoded it becomes U+FFFD (EF BF BD), so a hash over decoded text would differ.
    const [before, after] = JSON.stringify(fields).split('\\u0000') as [string, string];
    const bytes = Buffer.concat([Buffer.from(before), Buffer.from([0xff]), Buffer.from(after)]);
    const send = (header: string) =>
      fetch(`${api.baseUrl}${CANCEL}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-signature': header },
        body: bytes,
      });
    const overDecoded = signatureHeaderValue(merchant.secretKey, Date.now(), {
      method: 'POST',
      pathWithQuery: CANCEL,
      body: bytes.toString('utf8'),
    });
    await expectRefused(await send(overDecoded));
    const overBytes = signatureHeaderValue(merchant.secretKey, Date.now(), {
      method: 'POST',
      pathWithQuery: CANCEL,
      body: new Uint8Array(bytes),
    });
    expect((await send(overBytes)).status).toBe(200);
  });

  it('answers the identical request replayed within the window as a retry: the first job id, no new job', async () => {
    const merchant = await v2Merchant();
    const body = JSON.stringify(signedBody(merchant, { id: randomUUID() }));
    const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: CANCEL, body });
    const first = await api.post(CANCEL, body, headers);
    expect(first.status).toBe(200);
    const replayed = await api.post(CANCEL, body, headers);
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('x-job-id')).toBe(first.headers.get('x-job-id'));
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('whose secret', () => {
  it('accepts the previous secret during a rotation, and refuses it after its expiry', async () => {
    const rotating = await v2Merchant({
      secretKey: 'new-secret',
      previousSecretKey: 'old-secret',
      previousSecretValidUntil: Date.now() + 60 * 60 * 1000,
    });
    const body = JSON.stringify(signedBody(rotating, { id: randomUUID() }));
    const oldHeader = bodyBoundHeaders(
      rotating,
      { method: 'POST', pathWithQuery: CANCEL, body },
      { secretKey: 'old-secret' },
    );
    expect((await api.post(CANCEL, body, oldHeader)).status).toBe(200);

    const expired = await v2Merchant({
      secretKey: 'new-secret',
      previousSecretKey: 'old-secret',
      previousSecretValidUntil: Date.now() - 1_000,
    });
    const expiredBody = JSON.stringify(signedBody(expired, { id: randomUUID() }));
    const stale = bodyBoundHeaders(
      expired,
      { method: 'POST', pathWithQuery: CANCEL, body: expiredBody },
      { secretKey: 'old-secret' },
    );
    await expectRefused(await api.post(CANCEL, expiredBody, stale));
    const current = bodyBoundHeaders(expired, { method: 'POST', pathWithQuery: CANCEL, body: expiredBody });
    expect((await api.post(CANCEL, expiredBody, current)).status).toBe(200);
  });

  it("refuses an X-Signature made with another merchant's secret", async () => {
    const victim = await v2Merchant();
    const attacker = await v2Merchant();
    const body = JSON.stringify(signedBody(victim, { id: randomUUID() }));
    const header = signatureHeaderValue(attacker.secretKey, Date.now(), {
      method: 'POST',
      pathWithQuery: CANCEL,
      body,
    });
    await expectRefused(await api.post(CANCEL, body, { 'x-signature': header }));
    // The attacker's own, valid for the attacker, says nothing for the victim either.
    const attackerBody = JSON.stringify(signedBody(attacker, { id: randomUUID() }));
    const attackerHeaders = bodyBoundHeaders(attacker, { method: 'POST', pathWithQuery: CANCEL, body: attackerBody });
    expect((await api.post(CANCEL, attackerBody, attackerHeaders)).status).toBe(200);
    await expectRefused(await api.post(CANCEL, attackerBody.replace(attacker.id, victim.id), attackerHeaders));
  });
});
