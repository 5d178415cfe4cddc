import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cancelPaths } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { bodyBoundHeaders, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

// requireSignatureV2 (per merchant, set by an admin): version 1 is refused where a captured signature
// does harm, the cancel routes and the abort; the merchant's read routes keep its signature version.

const { env, api } = useTestContext({ api: true });

const ABORT = '/api/v1/integration/jobs/cancel';

async function patchMerchant(merchantId: string, body: unknown): Promise<Response> {
  return fetch(`${api.adminUrl}/admin/v1/merchants/${merchantId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function expectUnsigned(response: Response): Promise<void> {
  expect(response.status).toBe(401);
  expect(response.headers.get('x-job-id')).toBeNull();
  expect(await response.json()).toMatchObject({ errorCode: 2 });
}

function v2(merchant: MerchantFixture, path: string, fields: Record<string, unknown>) {
  const body = JSON.stringify(signedBody(merchant, fields));
  return { body, headers: bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: path, body }) };
}

describe('requireSignatureV2', () => {
  it('set by the admin PATCH, refuses a v1 cancel (401 errorCode 2, nothing queued) and accepts it signed v2', async () => {
    const merchant = await createMerchant(env.db);
    const before = await api.post(cancelPaths.cancel, signedBody(merchant, { externalId: 'before' }));
    expect(before.status).toBe(200);

    const patched = await patchMerchant(merchant.id, { requireSignatureV2: true });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ requireSignatureV2: true, signatureVersion: 1 });

    await expectUnsigned(await api.post(cancelPaths.cancel, signedBody(merchant, { externalId: 'after' })));
    const signed = v2(merchant, cancelPaths.cancel, { externalId: 'after' });
    const accepted = await api.post(cancelPaths.cancel, signed.body, signed.headers);
    expect(accepted.status).toBe(200);
    expect(accepted.headers.get('x-job-id')).not.toBeNull();
  });

  it('refuses v1 on bulkCancel, bulkCancelByQuery and the abort', async () => {
    const merchant = await createMerchant(env.db, { requireSignatureV2: true });
    await expectUnsigned(await api.post(cancelPaths.bulkCancel, signedBody(merchant, { externalIds: ['a'] })));
    await expectUnsigned(await api.post(cancelPaths.bulkCancelByQuery, signedBody(merchant, { playerIds: ['p'] })));
    await expectUnsigned(await api.post(ABORT, signedBody(merchant, { jobId: randomUUID() })));
    // Signed v2, the abort gets as far as the job: this one does not exist.
    const abort = v2(merchant, ABORT, { jobId: randomUUID() });
    expect((await api.post(ABORT, abort.body, abort.headers)).status).toBe(404);
  });

  it('leaves the read routes on the merchant signature version (v1 job status still served)', async () => {
    const merchant = await createMerchant(env.db, { requireSignatureV2: true });
    const status = await api.post(cancelPaths.jobStatus, signedBody(merchant, { jobId: randomUUID() }));
    expect(status.status).toBe(404);
    const readAll = await api.post('/api/v1/integration/reward-configurations/readAll', signedBody(merchant));
    expect(readAll.status).toBe(200);
  });

  it('set back to false, v1 cancels are served again; a value that is not a boolean is refused (400)', async () => {
    const merchant = await createMerchant(env.db, { requireSignatureV2: true });
    const refused = await patchMerchant(merchant.id, { requireSignatureV2: 'yes' });
    expect(refused.status).toBe(400);
    await expectUnsigned(await api.post(cancelPaths.cancel, signedBody(merchant, { externalId: 'still-refused' })));

    const patched = await patchMerchant(merchant.id, { requireSignatureV2: false });
    expect(await patched.json()).toMatchObject({ requireSignatureV2: false });
    expect((await api.post(cancelPaths.cancel, signedBody(merchant, { externalId: 'served' }))).status).toBe(200);
  });
});
