import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { httpRequestsCounted } from '../helpers/read-metrics.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/** The access line (src/api/http/access-log.ts): the logger's own line for the request's fields. */

const READ_ALL = '/api/v1/integration/reward-configurations/readAll';
const CANCEL = '/api/v1/integration/rewards/cancel';

const { env } = useTestContext();
let merchant: MerchantFixture;
const started: TestApi[] = [];

beforeAll(async () => {
  merchant = await createMerchant(env.db);
});
afterAll(async () => {
  for (const api of started) await api.close();
});

async function apiLoggingAt(level: string): Promise<{ api: TestApi; lines: string[] }> {
  const lines: string[] = [];
  // One write may hold several lines, each ending in a newline.
  const logger = createLogger(
    { level, name: 'api-test' },
    { write: (chunk: string) => lines.push(...chunk.split(/(?<=\n)/)) },
  );
  const api = await startTestApi(env, { logger });
  started.push(api);
  return { api, lines };
}

describe('the access line', () => {
  it('is one JSON line per request, with pino’s leading fields and the request’s own', async () => {
    const { api, lines } = await apiLoggingAt('info');
    const requestId = `access-${randomUUID()}`;
    const read = await api.post(READ_ALL, signedBody(merchant), { 'x-request-id': requestId });
    expect(read.status).toBe(200);
    const cancel = await api.post(CANCEL, signedBody(merchant, { externalId: `gone-${randomUUID()}` }));
    expect(cancel.status).toBe(200);
    const jobId = cancel.headers.get('x-job-id') as string;
    const refused = await api.post(READ_ALL, { ...signedBody(merchant), hash: 'ab' });
    expect(refused.status).toBe(401);
    // Whatever the destination still holds is written, as the shutdown does.
    await api.deps.accessLog.flush();

    const entries = lines.map((line) => {
      expect(line.endsWith('\n')).toBe(true);
      return JSON.parse(line) as Record<string, unknown>;
    });
    const requests = entries.filter((entry) => entry.msg === 'request');
    const readLine = requests.find((entry) => entry.requestId === requestId);
    // The order pino writes: level, time, the logger's base fields, the line's fields, the message.
    expect(Object.keys(readLine ?? {})).toEqual([
      'level',
      'time',
      'service',
      'requestId',
      'method',
      'route',
      'status',
      'ms',
      'merchantId',
      'msg',
    ]);
    expect(readLine).toMatchObject({ level: 30, service: 'api-test', method: 'POST', route: READ_ALL, status: 200 });
    expect(readLine?.merchantId).toBe(merchant.id);
    expect(new Date(String(readLine?.time)).toISOString()).toBe(readLine?.time);
    expect(typeof readLine?.ms).toBe('number');

    const cancelLine = requests.find((entry) => entry.jobId === jobId);
    expect(cancelLine).toMatchObject({ route: CANCEL, status: 200, merchantId: merchant.id });
    // A refusal before the merchant is known names no merchant.
    const refusedLine = requests.find((entry) => entry.status === 401);
    expect(refusedLine).toMatchObject({ route: READ_ALL });
    expect(refusedLine).not.toHaveProperty('merchantId');
    expect(refusedLine).not.toHaveProperty('jobId');
  });

  it('is not written above info, while the request is still counted', async () => {
    const { api, lines } = await apiLoggingAt('warn');
    const before = await httpRequestsCounted(api.adminUrl, READ_ALL, 200);
    expect((await api.post(READ_ALL, signedBody(merchant))).status).toBe(200);
    await api.deps.accessLog.flush();
    expect(lines.filter((line) => line.includes('"msg":"request"'))).toEqual([]);
    expect(await httpRequestsCounted(api.adminUrl, READ_ALL, 200)).toBe(before + 1);
  });
});
