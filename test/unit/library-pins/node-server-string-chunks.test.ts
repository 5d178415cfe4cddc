import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * jobs/report streams its NDJSON as string chunks (src/api/jobs/ndjson-report-stream.ts): @hono/node-server
 * hands each chunk of a ReadableStream body to Node's `res.write`, which takes a string and encodes it on
 * its way to the socket, so no ArrayBuffer per chunk piles up outside V8's heap. A web-standard Response
 * would refuse a string chunk; if an upgrade of the adapter routes stream bodies through one, this fails
 * here rather than in a merchant's download.
 */
describe('@hono/node-server writes string chunks of a stream body', () => {
  const app = new Hono();
  const chunks = ['{"line":1}\n', '{"line":"é✓"}\n', `${'x'.repeat(70_000)}\n`];
  app.get('/', (c) => {
    const body = new ReadableStream<string>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    return c.body(body, 200, { 'Content-Type': 'application/x-ndjson' });
  });
  let server: ReturnType<typeof serve>;
  let url = '';

  beforeAll(async () => {
    server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends every chunk as its UTF-8 bytes, in order', async () => {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(chunks.join(''), 'utf8'))).toBe(true);
  });
});
