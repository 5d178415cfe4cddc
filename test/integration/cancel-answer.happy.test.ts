import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths } from '../helpers/cancellation.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { queueJobHolding } from '../helpers/queue-inspection.js';
import { signedBody } from '../helpers/signing.js';

/**
 * Issue 27 item 3: a cancel's 200 carries `{jobId}` as JSON besides X-Job-Id, so the id is hard to
 * lose; `Prefer: return=minimal` keeps the interface's empty 200; a dry run answers its counts.
 */

let env: TestEnvironment;
let api: TestApi;
let merchant: MerchantFixture;

beforeAll(async () => {
  env = await createTestEnvironment();
  api = await startTestApi(env);
  merchant = await createMerchant(env.db);
});
afterAll(async () => {
  await api?.close();
  await env?.close();
});

const requests = [
  ['cancel', { externalId: 'answer-1' }],
  ['bulkCancel', { externalIds: ['answer-2', 'answer-3'] }],
  ['bulkCancelByQuery', { playerIds: ['answer-player'] }],
] as const;

describe('the 200 of a cancel', () => {
  it.each(requests)('%s: JSON {jobId}, the same id as X-Job-Id, and the job is stored', async (operation, fields) => {
    const response = await api.post(cancelPaths[operation], signedBody(merchant, fields));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const jobId = response.headers.get('x-job-id') as string;
    expect(await response.json()).toEqual({ jobId });
    const job = await queueJobHolding(
      api.deps.producer.queues.listed().map(({ queue }) => queue),
      jobId,
    );
    expect(job?.data.merchantId).toBe(merchant.id);
  });

  it.each(requests)('%s: with Prefer: return=minimal, the empty 200 of the interface', async (operation, fields) => {
    const response = await api.post(
      cancelPaths[operation],
      signedBody(merchant, { ...fields, ...(operation === 'cancel' ? { externalId: 'answer-minimal' } : {}) }),
      { Prefer: 'respond-async, return=minimal' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('preference-applied')).toBe('return=minimal');
    expect(response.headers.get('content-length')).toBe('0');
    expect(await response.text()).toBe('');
    expect(response.headers.get('x-job-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a dry run answers its counts, not a job, whatever Prefer says', async () => {
    const response = await api.post(
      cancelPaths.bulkCancel,
      signedBody(merchant, { externalIds: ['answer-dry'], dryRun: true }),
      { Prefer: 'return=minimal' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-job-id')).toBeNull();
    expect(await response.json()).toEqual({
      requested: 1,
      cancellable: 0,
      alreadyCancelled: 0,
      notCancellable: 0,
      notFound: 1,
    });
  });
});
