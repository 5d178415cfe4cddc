import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BodyBudget } from '../../src/api/http/body-budget.js';
import type { Config } from '../../src/shared/config/config.js';
import { Metrics } from '../../src/shared/telemetry/metrics.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createMerchant } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * Bytes in flight before authentication, bounded per API process (UNAUTHENTICATED_BODY_BYTES_MAX, 1 MiB
 * here; bulk bodies together at most half of it). Many slow uploads that declare a large body, send
 * most of it and stall: the first few are read, every later one gets 503 errorCode 11 with Retry-After
 * before a byte of it is read (the budget gauge stays at what the admitted ones declared), and a signed
 * small request is still served. When the uploads end (closed, or cut by the request timeout), the budget is back.
 */

const BUDGET = 1024 * 1024;
const BULK_LIMIT = 256 * 1024;
const DECLARED = 200 * 1024;
const BULK_CANCEL = '/api/v1/integration/rewards/bulkCancel';
const CANCEL = '/api/v1/integration/rewards/cancel';
/** What every upload sends, one buffer for all. */
const PADDING = Buffer.alloc(DECLARED, 0x20);

const { env } = useTestContext();
let api: TestApi;

/** An API whose configuration sets the bound (and a smaller bulk limit, which must fit twice in it). */
function startBoundedApi(settings: Partial<Config> = {}): Promise<TestApi> {
  const config: Config = {
    ...env.config,
    UNAUTHENTICATED_BODY_BYTES_MAX: BUDGET,
    BODY_LIMIT_BYTES: BULK_LIMIT,
    RATE_LIMIT_PER_SECOND: 0,
    ...settings,
  };
  // The test helper builds its parts from the environment's configuration: the budget, and the metrics
  // it reports to, from this one.
  const metrics = new Metrics({ collectDefaults: false, processName: 'api' });
  const bodyBudget = new BodyBudget(
    config.UNAUTHENTICATED_BODY_BYTES_MAX,
    config.SMALL_BODY_LIMIT_BYTES,
    metrics.unauthenticatedBodyBytes,
  );
  return startTestApi(env, { config, metrics, bodyBudget });
}

beforeAll(async () => {
  // Started here rather than by the context: its configuration is built from the environment's.
  api = await startBoundedApi({ HTTP_REQUEST_TIMEOUT_MS: 60_000, HTTP_HEADERS_TIMEOUT_MS: 60_000 });
});
afterAll(async () => {
  await api?.close();
});

interface SlowUpload {
  socket: Socket;
  /** The answer's head and what followed, once one came (a refusal); empty while the body is being read. */
  answer: () => string;
}

/** A bulkCancel that declares DECLARED bytes, sends all but the last KiB of them, and stalls. */
async function slowUpload(target: TestApi, declared = DECLARED): Promise<SlowUpload> {
  const { hostname, port } = new URL(target.baseUrl);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  socket.write(
    `POST ${BULK_CANCEL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`,
  );
  socket.write(PADDING.subarray(0, declared - 1024));
  return { socket, answer: () => received };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function budgetGauge(target: TestApi): Promise<number> {
  const text = await (await target.get('/metrics')).text();
  const line = text.split('\n').find((entry) => entry.startsWith('gateway_http_unauthenticated_body_bytes'));
  return Number(line?.split(' ').at(-1));
}

describe('bytes in flight before authentication', { timeout: 60_000 }, () => {
  it('refuses new bodies with 503 and Retry-After past the bound, holds only the admitted bytes, and still serves a signed cancel', async () => {
    const merchant = await createMerchant(env.db);
    const uploads: SlowUpload[] = [];
    try {
      // 150 uploads of 200 KiB: 30 MiB if every one were read.
      for (let i = 0; i < 150; i++) uploads.push(await slowUpload(api));
      // Every refused one has its answer; the admitted ones are still being read.
      await waitFor(() => uploads.filter((upload) => upload.answer() !== '').length >= 148, 'the refusals');
      const refused = uploads.filter((upload) => upload.answer() !== '');
      const admitted = uploads.filter((upload) => upload.answer() === '');
      // Bulk bodies hold at most half of the budget: two of 200 KiB fit in 512 KiB, a third does not.
      expect(admitted).toHaveLength(2);
      for (const upload of refused) {
        const answer = upload.answer();
        expect(answer).toMatch(/^HTTP\/1\.1 503 /);
        expect(answer).toMatch(/\r\nretry-after: 1\r\n/i);
        await waitFor(() => upload.answer().includes('}'), 'the error body');
        expect(JSON.parse(upload.answer().slice(upload.answer().indexOf('\r\n\r\n') + 4))).toEqual({
          errorCode: 11,
          errorMessage: 'Too many request bodies in flight',
        });
      }
      // Memory: the bytes being read are what the two admitted bodies declared, not the 30 MiB that 150
      // uploads declared (and mostly sent): the others were answered before a byte of theirs was read.
      expect(api.deps.bodyBudget.reserved).toBe(2 * DECLARED);
      expect(await budgetGauge(api)).toBe(2 * DECLARED);

      // A signed small request still finds room, in the half bulk bodies cannot take.
      const cancel = await api.post(CANCEL, signedBody(merchant, { externalId: 'body-budget-reward' }));
      expect(cancel.status).toBe(200);
    } finally {
      for (const upload of uploads) upload.socket.destroy();
    }

    // The admitted uploads went away mid-body: their reservations are released.
    await waitFor(() => api.deps.bodyBudget.reserved === 0, 'the budget released');
    expect(await budgetGauge(api)).toBe(0);
    const again = await slowUpload(api);
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(again.answer()).toBe('');
      expect(api.deps.bodyBudget.reserved).toBe(DECLARED);
    } finally {
      again.socket.destroy();
    }
    await waitFor(() => api.deps.bodyBudget.reserved === 0, 'the budget released again');
  });

  it('bounds small bodies too: slow readAll uploads past the whole budget are refused', async () => {
    const uploads: Socket[] = [];
    const answers: string[] = [];
    try {
      for (let i = 0; i < 80; i++) {
        const { hostname, port } = new URL(api.baseUrl);
        const socket = connect(Number(port), hostname);
        await once(socket, 'connect');
        const index = answers.push('') - 1;
        socket.on('data', (chunk: Buffer) => {
          answers[index] += chunk.toString('latin1');
        });
        socket.on('error', () => {});
        socket.write(
          'POST /api/v1/integration/reward-configurations/readAll HTTP/1.1\r\nHost: x\r\n' +
            `Content-Type: application/json\r\nContent-Length: ${16 * 1024}\r\n\r\n{`,
        );
        uploads.push(socket);
      }
      // 1 MiB holds 64 bodies of 16 KiB; the other 16 are refused.
      await waitFor(() => answers.filter((answer) => answer !== '').length >= 16, 'the refusals');
      expect(answers.filter((answer) => answer.startsWith('HTTP/1.1 503 '))).toHaveLength(16);
      expect(api.deps.bodyBudget.reserved).toBe(64 * 16 * 1024);
    } finally {
      for (const socket of uploads) socket.destroy();
    }
    await waitFor(() => api.deps.bodyBudget.reserved === 0, 'the budget released');
  });

  it('gets the budget back when the request timeout cuts a stalled upload', async () => {
    const quick = await startBoundedApi({ HTTP_REQUEST_TIMEOUT_MS: 1_000, HTTP_HEADERS_TIMEOUT_MS: 1_000 });
    const upload = await slowUpload(quick);
    try {
      await waitFor(() => quick.deps.bodyBudget.reserved === DECLARED, 'the reservation');
      // Nothing closes it from this side: the server's request timeout does, and releases it.
      await waitFor(() => quick.deps.bodyBudget.reserved === 0, 'the budget released by the timeout');
      expect(upload.answer()).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      upload.socket.destroy();
      await quick.close();
    }
  });
});
