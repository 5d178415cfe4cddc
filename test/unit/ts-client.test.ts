import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  JobReportError,
  MerchantClient,
  signatureHeader,
  signV1,
  splitWithinLimits,
} from '../../clients/typescript/src/index.js';

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

describe('clients/typescript job ids', () => {
  /** A fake service: records each request's Prefer header, answers a cancel as `answer` says. */
  function serviceAnswering(answer: (prefer: string | null) => Response) {
    const prefers: Array<string | null> = [];
    const fakeFetch = (async (_url: string, init: { headers: Record<string, string> }) => {
      const prefer = init.headers.prefer ?? null;
      prefers.push(prefer);
      return answer(prefer);
    }) as unknown as typeof fetch;
    const client = new MerchantClient({ baseUrl: 'http://service', merchantId: 'm', secret: 's', fetch: fakeFetch });
    return { client, prefers };
  }

  it('asks each cancel for return=representation and answers the job id of its JSON body', async () => {
    const { client, prefers } = serviceAnswering(
      () => new Response(JSON.stringify({ jobId: 'from-body' }), { status: 200, headers: { 'x-job-id': 'from-body' } }),
    );
    expect(await client.cancel({ externalId: 'x' })).toBe('from-body');
    expect(await client.bulkCancel({ externalIds: ['x', 'y'] })).toEqual(['from-body']);
    expect(await client.bulkCancelByQuery({ playerIds: ['p'] })).toEqual(['from-body']);
    expect(prefers).toEqual(['return=representation', 'return=representation', 'return=representation']);
  });

  it("answers X-Job-Id of the interface's empty 200 (a service or proxy that ignored Prefer)", async () => {
    const { client } = serviceAnswering(
      () => new Response(null, { status: 200, headers: { 'x-job-id': 'from-header' } }),
    );
    expect(await client.cancel({ id: '00000000-0000-4000-8000-000000000001' })).toBe('from-header');
  });
});

describe('clients/typescript retries', () => {
  it('throws an answer whose Retry-After is longer than maxDelayMs instead of sleeping on it', async () => {
    const slept: number[] = [];
    let sent = 0;
    const fakeFetch = (async () => {
      sent += 1;
      const body = JSON.stringify({ errorCode: 7, errorMessage: 'Too many Idempotency-Key records' });
      return new Response(body, { status: 429, headers: { 'retry-after': '86400' } });
    }) as unknown as typeof fetch;
    const client = new MerchantClient({
      baseUrl: 'http://service',
      merchantId: 'm',
      secret: 's',
      fetch: fakeFetch,
      sleep: async (ms) => {
        slept.push(ms);
      },
    });
    await expect(client.readAll()).rejects.toMatchObject({ status: 429, errorCode: 7, retryAfterSeconds: 86_400 });
    expect(sent).toBe(1);
    expect(slept).toEqual([]);
  });
});

describe('clients/typescript watch', () => {
  const status = (state: string, progress: number) => ({ jobId: 'j', state, progress });
  const block = (event: string, id: string, data: unknown) =>
    `event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`;

  it('yields progress then the final event, and after a dropped stream reconnects signed afresh with Last-Event-ID', async () => {
    const requests: Array<{ url: URL; lastEventId: string | null }> = [];
    const fakeFetch = (async (url: string, init: { headers: Record<string, string> }) => {
      requests.push({ url: new URL(url), lastEventId: init.headers['last-event-id'] ?? null });
      const body =
        requests.length === 1
          ? // A comment line, one event, then the connection ends without a final event.
            `: keep-alive\n\n${block('progress', 'a1', status('running', 40))}`
          : block('completed', 'b2', status('completed', 100));
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }) as unknown as typeof fetch;
    const client = new MerchantClient({
      baseUrl: 'http://service',
      merchantId: 'm',
      secret: 's',
      fetch: fakeFetch,
      sleep: async () => {},
    });
    const events = [];
    for await (const event of client.watch('j')) events.push(event);
    expect(events).toEqual([
      { type: 'progress', id: 'a1', status: status('running', 40) },
      { type: 'completed', id: 'b2', status: status('completed', 100) },
    ]);
    expect(requests.map((request) => request.lastEventId)).toEqual([null, 'a1']);
    for (const { url } of requests) {
      expect(url.pathname).toBe('/api/v1/integration/jobs/events');
      const timestamp = url.searchParams.get('timestamp') as string;
      expect(url.searchParams.get('hash')).toBe(signV1('m', 's', timestamp));
      expect(url.searchParams.get('jobId')).toBe('j');
    }
  });

  it('raises a 404 as MerchantApiError with its errorCode, without retrying', async () => {
    let calls = 0;
    const fakeFetch = (async () => {
      calls++;
      return new Response(JSON.stringify({ errorCode: 10, errorMessage: 'Job not found' }), { status: 404 });
    }) as unknown as typeof fetch;
    const client = new MerchantClient({ baseUrl: 'http://service', merchantId: 'm', secret: 's', fetch: fakeFetch });
    await expect(client.watch('j').next()).rejects.toMatchObject({ status: 404, errorCode: 10 });
    expect(calls).toBe(1);
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
describe('clients/typescript downloadReport', () => {
  const lines = '{"id":"a","externalId":null,"playerId":"p","outcome":"cancelled"}\n'.repeat(3);
  const summaryOf = (body: string) =>
    `${JSON.stringify({ summary: { lines: 3, cancelled: 3, sha256: createHash('sha256').update(body).digest('hex') } })}\n`;
  /** A client whose fetch answers `body` in chunks of 7 bytes, so lines and the summary straddle chunks. */
  const clientAnswering = (body: string) => {
    const fakeFetch = (async () => {
      const bytes = Buffer.from(body);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.subarray(i, i + 7));
          controller.close();
        },
      });
      return new Response(stream, { status: 200, headers: { 'content-type': 'application/x-ndjson' } });
    }) as unknown as typeof fetch;
    return new MerchantClient({ baseUrl: 'http://service', merchantId: 'm', secret: 's', fetch: fakeFetch });
  };
  const directory = mkdtempSync(join(tmpdir(), 'ts-client-report-'));

  it('saves a report whose checksum holds, byte for byte, and answers its summary', async () => {
    const body = lines + summaryOf(lines);
    const path = join(directory, 'whole.ndjson');
    const summary = await clientAnswering(body).downloadReport('job', path);
    expect(summary).toMatchObject({ lines: 3, cancelled: 3 });
    expect(readFileSync(path, 'utf8')).toBe(body);
  });

  it('refuses a report whose lines were changed, and one cut before its summary line, leaving no file', async () => {
    const tampered = lines.replace('"p"', '"q"') + summaryOf(lines);
    const cut = lines;
    for (const [name, body] of [
      ['tampered', tampered],
      ['cut', cut],
    ] as const) {
      const path = join(directory, `${name}.ndjson`);
      await expect(clientAnswering(body).downloadReport('job', path)).rejects.toBeInstanceOf(JobReportError);
      expect(existsSync(path)).toBe(false);
      expect(existsSync(`${path}.partial`)).toBe(false);
    }
  });
});
