import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MerchantClient, signatureHeader, signV1, splitWithinLimits } from '../../clients/typescript/src/index.js';

/** The TypeScript client's pure parts: its signing against the vector file, its splitting, its clock. */

const vectors = JSON.parse(readFileSync(new URL('../../docs/signing-test-vectors.json', import.meta.url), 'utf8')) as {
  v1: Array<{ merchantId: string; secret: string; timestamp: number | string; hash: string }>;
  v2: Array<{ secret: string; t: number; method: string; pathWithQuery: string; body: string; xSignature: string }>;
};

describe('clients/typescript signing', () => {
  it.each(vectors.v1)('v1: $name', (vector) => {
    expect(signV1(vector.merchantId, vector.secret, vector.timestamp)).toBe(vector.hash);
  });
  it.each(vectors.v2)('v2: $name', (vector) => {
    expect(signatureHeader(vector.secret, vector.t, vector.method, vector.pathWithQuery, vector.body)).toBe(
      vector.xSignature,
    );
  });
});

describe('clients/typescript splitting', () => {
  const limits = { maxItems: 10_000, maxBodyBytes: 2 * 1024 * 1024 };

  it('keeps every part within 10,000 entries and 2 MiB, in order, dropping nothing', () => {
    // 10,000 ids of 255 characters are about 2.6 MB: the byte limit splits before the count does.
    const long = Array.from({ length: 10_000 }, (_, i) => ({ list: 'externalIds', value: String(i).padEnd(255, 'x') }));
    const parts = splitWithinLimits(long, limits);
    expect(parts.length).toBe(2);
    for (const part of parts) {
      const body = JSON.stringify({
        merchantId: 'm'.repeat(36),
        timestamp: 1,
        hash: 'h'.repeat(64),
        externalIds: part.map((e) => e.value),
      });
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(limits.maxBodyBytes);
    }
    expect(parts.flat()).toEqual(long);
    const short = Array.from({ length: 25_000 }, (_, i) => ({ list: 'ids', value: `id-${i}` }));
    expect(splitWithinLimits(short, limits).map((part) => part.length)).toEqual([10_000, 10_000, 5_000]);
  });
});

describe('clients/typescript clock', () => {
  it('corrects its clock from the server time of an errorCode 3 and signs the retry with it', async () => {
    const serverTime = Date.now() + 3_600_000;
    const sent: number[] = [];
    const fakeFetch = (async (_url: string, init: { body: Buffer }) => {
      sent.push(JSON.parse(init.body.toString('utf8')).timestamp);
      if (sent.length === 1) {
        const message = `Timestamp outside the accepted window: timestamp ${sent[0]} is 3600000 ms behind the server time ${serverTime} (epoch ms); the window is ±300000 ms`;
        return new Response(JSON.stringify({ errorCode: 3, errorMessage: message }), { status: 401 });
      }
      return new Response('[]', { status: 200 });
    }) as unknown as typeof fetch;
    const client = new MerchantClient({ baseUrl: 'http://service', merchantId: 'm', secret: 's', fetch: fakeFetch });
    expect(await client.readAll()).toEqual([]);
    expect(sent).toHaveLength(2);
    expect(Math.abs((sent[1] as number) - serverTime)).toBeLessThan(1_000);
  });
});

describe('clients/typescript webhook routes', () => {
  it('does not resend a rotation or an event when the outcome is unknown (a 500), and answers null for no endpoint', async () => {
    const calls: string[] = [];
    const fakeFetch = (async (url: string) => {
      calls.push(new URL(url).pathname);
      if (url.endsWith('/webhooks/get')) {
        return new Response(JSON.stringify({ errorCode: 10, errorMessage: 'No webhook endpoint is set' }), {
          status: 404,
        });
      }
      return new Response(JSON.stringify({ errorCode: 99, errorMessage: 'Internal error' }), { status: 500 });
    }) as unknown as typeof fetch;
    const client = new MerchantClient({
      baseUrl: 'http://service',
      merchantId: 'm',
      secret: 's',
      fetch: fakeFetch,
      sleep: async () => {},
    });
    expect(await client.getWebhook()).toBeNull();
    await expect(client.rotateWebhookSecret()).rejects.toMatchObject({ status: 500 });
    await expect(client.redeliverWebhookEvent('msg_x')).rejects.toMatchObject({ status: 500 });
    await expect(client.sendWebhookTestEvent()).rejects.toMatchObject({ status: 500 });
    expect(calls).toEqual([
      '/api/v1/integration/webhooks/get',
      '/api/v1/integration/webhooks/rotateSecret',
      '/api/v1/integration/webhooks/redeliver',
      '/api/v1/integration/webhooks/test',
    ]);
  });
});
