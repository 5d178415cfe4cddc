import { beforeAll, describe, expect, it } from 'vitest';
import { cancelPaths } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

// A store that times out may still land: the Idempotency-Key's record keeps the job id chosen before
// the store, so a retry with the same key answers that id and never queues a second job.

// No worker: the job stays where the API put it.
const { env, api } = useTestContext({ settings: { ENQUEUE_TIMEOUT_MS: '200' }, api: true });
let merchant: MerchantFixture;

const STORE_DELAY_MS = 600;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
});

describe('an enqueue that times out', () => {
  it('keeps its Idempotency-Key: 409 while it may still store, then the retry answers the stored job id', async () => {
    const queue = api.deps.producer.queues.forMerchant(merchant.id).queues['bulk-cancel'];
    const realAdd = queue.add.bind(queue);
    // Redis slow to take the job: it is stored, but after the API's deadline.
    queue.add = (async (...args: Parameters<typeof realAdd>) => {
      await new Promise((resolve) => setTimeout(resolve, STORE_DELAY_MS));
      return realAdd(...args);
    }) as typeof queue.add;
    const fields = { playerIds: ['slow-store'] };
    const send = () =>
      api.post(cancelPaths.bulkCancelByQuery, signedBody(merchant, fields), { 'Idempotency-Key': 'k' });
    try {
      const timedOut = await send();
      expect(timedOut.status).toBe(503);
      expect(await timedOut.json()).toMatchObject({ errorCode: 11 });

      const early = await send();
      expect(early.status).toBe(409);
      expect(await early.json()).toMatchObject({ errorCode: 13 });

      const stored = await eventually(async () => (await queue.getJobs(['prioritized', 'waiting'])).at(0), {
        timeoutMs: 5_000,
        what: 'the late job to land',
      });
      const retried = await eventually(
        async () => {
          const answer = await send();
          return answer.status === 409 ? undefined : answer;
        },
        { timeoutMs: 5_000, what: 'the store deadline to pass' },
      );
      expect(retried.status).toBe(200);
      expect(retried.headers.get('x-job-id')).toBe(stored.id);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      expect(await queue.getJobs(['prioritized', 'waiting', 'active', 'completed'])).toHaveLength(1);
    } finally {
      queue.add = realAdd as typeof queue.add;
    }
  });
});
