import { beforeAll, describe, expect, it } from 'vitest';
import { cancelPaths } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { queueJobHolding } from '../helpers/queue-inspection.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * A cancel's 200 is the interface's answer by default: an empty body without a media type, the job id
 * in X-Job-Id. `Prefer: return=representation` (RFC 7240, in any of its spellings) adds `{jobId}` as
 * JSON; `return=minimal` says the default out loud; a replayed request answers in the form it asks
 * for; a dry run answers its counts whatever Prefer says.
 */

const { env, api } = useTestContext({ api: true });
let merchant: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const requests = [
  ['cancel', { externalId: 'answer-1' }],
  ['bulkCancel', { externalIds: ['answer-2', 'answer-3'] }],
  ['bulkCancelByQuery', { playerIds: ['answer-player'] }],
] as const;

type Operation = (typeof requests)[number][0];

/** Each test its own identifiers, so that no request shares the waiting job of another test's. */
function fieldsFor(operation: Operation, tag: string): Record<string, unknown> {
  if (operation === 'cancel') return { externalId: `answer-${tag}` };
  if (operation === 'bulkCancel') return { externalIds: [`answer-${tag}-1`, `answer-${tag}-2`] };
  return { playerIds: [`answer-player-${tag}`] };
}

async function expectEmptyAnswer(response: Response): Promise<string> {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-length')).toBe('0');
  expect(response.headers.get('content-type')).toBeNull();
  expect(await response.text()).toBe('');
  const jobId = response.headers.get('x-job-id') as string;
  expect(jobId).toMatch(UUID);
  return jobId;
}

async function expectStored(jobId: string): Promise<void> {
  const queues = api.deps.producer.queues.listed().map(({ queue }) => queue);
  expect((await queueJobHolding(queues, jobId))?.data.merchantId).toBe(merchant.id);
}

describe('the 200 of a cancel', () => {
  it.each(requests)('%s: by default an empty body, no Content-Type, the stored job in X-Job-Id', async (operation) => {
    const response = await api.post(cancelPaths[operation], signedBody(merchant, fieldsFor(operation, 'default')));
    const jobId = await expectEmptyAnswer(response);
    expect(response.headers.get('preference-applied')).toBeNull();
    await expectStored(jobId);
  });

  it.each(requests)(
    '%s: Prefer: return=representation gives {jobId} as JSON, the same id as X-Job-Id',
    async (operation) => {
      const response = await api.post(
        cancelPaths[operation],
        signedBody(merchant, fieldsFor(operation, 'representation')),
        { Prefer: 'return=representation' },
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('preference-applied')).toBe('return=representation');
      const jobId = response.headers.get('x-job-id') as string;
      expect(jobId).toMatch(UUID);
      expect(await response.json()).toEqual({ jobId });
      await expectStored(jobId);
    },
  );

  it.each([
    'respond-async, return=representation',
    'RETURN=Representation',
    'return = "representation"; ignored=1',
    'wait=10,return=representation,return=minimal',
  ])('Prefer: %s is read as return=representation (RFC 7240 list, any case, first return wins)', async (prefer) => {
    const response = await api.post(cancelPaths.cancel, signedBody(merchant, { externalId: `answer-${prefer}` }), {
      Prefer: prefer,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('preference-applied')).toBe('return=representation');
    expect(await response.json()).toEqual({ jobId: response.headers.get('x-job-id') });
  });

  it.each(requests)('%s: Prefer: return=minimal is the empty answer, with Preference-Applied', async (operation) => {
    const response = await api.post(cancelPaths[operation], signedBody(merchant, fieldsFor(operation, 'minimal')), {
      Prefer: 'respond-async, return=minimal',
    });
    await expectEmptyAnswer(response);
    expect(response.headers.get('preference-applied')).toBe('return=minimal');
  });

  it('a preference other than return, or an unknown return value, leaves the empty answer', async () => {
    for (const prefer of ['respond-async', 'return=everything', 'handling=strict']) {
      const response = await api.post(cancelPaths.cancel, signedBody(merchant, { externalId: `answer-${prefer}` }), {
        Prefer: prefer,
      });
      await expectEmptyAnswer(response);
      expect(response.headers.get('preference-applied')).toBeNull();
    }
  });

  it('a request replayed under its Idempotency-Key answers the same job in the form it asks for', async () => {
    const fields = { externalIds: ['answer-replayed'] };
    const headers = { 'Idempotency-Key': 'answer-replay-key' };
    const first = await api.post(cancelPaths.bulkCancel, signedBody(merchant, fields), headers);
    const jobId = await expectEmptyAnswer(first);

    const again = await api.post(cancelPaths.bulkCancel, signedBody(merchant, fields), headers);
    expect(await expectEmptyAnswer(again)).toBe(jobId);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const asJson = await api.post(cancelPaths.bulkCancel, signedBody(merchant, fields), {
      ...headers,
      Prefer: 'return=representation',
    });
    expect(asJson.headers.get('idempotent-replayed')).toBe('true');
    expect(asJson.headers.get('x-job-id')).toBe(jobId);
    expect(await asJson.json()).toEqual({ jobId });
  });

  it.each([undefined, 'return=minimal', 'return=representation'])(
    'a dry run answers its counts as JSON, not a job, with Prefer: %s',
    async (prefer) => {
      const response = await api.post(
        cancelPaths.bulkCancel,
        signedBody(merchant, { externalIds: ['answer-dry'], dryRun: true }),
        prefer === undefined ? {} : { Prefer: prefer },
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('x-job-id')).toBeNull();
      expect(response.headers.get('preference-applied')).toBeNull();
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toEqual({
        requested: 1,
        cancellable: 0,
        alreadyCancelled: 0,
        notCancellable: 0,
        notFound: 1,
      });
    },
  );
});
