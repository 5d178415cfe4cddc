import { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HttpBindings, serve } from '@hono/node-server';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppEnv } from '../../../src/api/context.js';
import {
  answerHeadersFromNode,
  nodeRequest,
  nodeResponse,
  omitDefaultContentType,
} from '../../../src/api/library-bypasses/node-http.js';
import { readRequestBody } from '../../../src/api/library-bypasses/request-body.js';

/**
 * The API reads bodies and headers from Node's own request and writes headers on Node's own response
 * (src/api/library-bypasses/node-http.ts, request-body.ts), relying on what @hono/node-server and hono
 * do with them: the adapter hands `{ incoming, outgoing }` to hono as `c.env`; hono's body cache, once
 * seeded with the bytes, is what `c.req.json()`, `c.req.text()` and the library's JSON validator read;
 * hono's validators read headers through `c.req.header`; headers set on the ServerResponse merge into
 * the head the adapter writes later, which it writes with `writeHead(status, headers)`. If an upgrade
 * changes any of that, this fails here rather than on every request.
 */
describe('@hono/node-server hands Node’s request and response to hono', () => {
  // The adapter's own type for what it passes as c.env.
  const app = new OpenAPIHono<AppEnv & { Bindings: HttpBindings }>();
  app.use(async (c, next) => {
    answerHeadersFromNode(c);
    await next();
  });
  app.use(readRequestBody(() => 1024));

  app.get('/env', (c) =>
    c.json({
      incoming: c.env.incoming instanceof IncomingMessage && nodeRequest(c) === c.env.incoming,
      outgoing: c.env.outgoing instanceof ServerResponse && nodeResponse(c) === c.env.outgoing,
      url: nodeRequest(c)?.url,
    }),
  );

  app.post('/cached', async (c) => c.json({ text: await c.req.text(), json: await c.req.json() }));

  const bodySchema = z.object({ amount: z.number(), note: z.string() });
  app.openapi(
    createRoute({
      method: 'post',
      path: '/validated',
      request: { body: { required: true, content: { 'application/json': { schema: bodySchema } } } },
      responses: {
        200: { description: 'The validated body', content: { 'application/json': { schema: bodySchema } } },
      },
    }),
    (c) => c.json(c.req.valid('json'), 200),
  );

  app.get('/headers', (c) => c.json({ one: c.req.header('X-Mixed-Case'), all: c.req.header() }));

  app.get('/merged', (c) => {
    nodeResponse(c)?.setHeader('X-Request-Id', 'set-on-node');
    return c.json({ ok: true }, 201, { 'X-From-Hono': 'yes' });
  });

  app.get('/empty', (c) => (omitDefaultContentType(c) ? c.body('', 200) : c.text('no node objects', 500)));
  app.get('/empty-default', (c) => c.body('', 200));

  let server: ReturnType<typeof serve>;
  let url = '';

  beforeAll(async () => {
    server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('passes { incoming, outgoing } as c.env', async () => {
    const response = await fetch(`${url}/env?x=1`);
    expect(await response.json()).toEqual({ incoming: true, outgoing: true, url: '/env?x=1' });
  });

  it('answers c.req.text() and c.req.json() from the body cache the middleware seeded', async () => {
    const body = '{"amount":5,"note":"é✓"}';
    const response = await fetch(`${url}/cached`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ text: body, json: { amount: 5, note: 'é✓' } });
  });

  it('validates the seeded body with the library’s JSON validator; c.req.valid("json") is its result', async () => {
    const response = await fetch(`${url}/validated`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"amount":7,"note":"n","extra":1}',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ amount: 7, note: 'n' });
  });

  it('reads a header set on Node’s request through c.req.header in the library’s media-type gate', async () => {
    // Bytes carry no Content-Type: the request-body middleware writes it into Node's headers
    // (http/json-content-type.ts); the library's gate must see it through c.req.header, or answer 415.
    const response = await fetch(`${url}/validated`, {
      method: 'POST',
      body: new TextEncoder().encode('{"amount":1,"note":"no type"}'),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ amount: 1, note: 'no type' });
  });

  it('answers c.req.header from Node’s parsed headers, by any case of the name', async () => {
    const response = await fetch(`${url}/headers`, { headers: { 'X-Mixed-Case': 'value' } });
    const answer = (await response.json()) as { one: string; all: Record<string, string> };
    expect(answer.one).toBe('value');
    expect(answer.all['x-mixed-case']).toBe('value');
    expect(answer.all.host).toBe(new URL(url).host);
  });

  it('merges headers set with ServerResponse.setHeader into the head the adapter writes', async () => {
    const response = await fetch(`${url}/merged`);
    expect(response.status).toBe(201);
    expect(response.headers.get('x-request-id')).toBe('set-on-node');
    expect(response.headers.get('x-from-hono')).toBe('yes');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ ok: true });
  });

  it('writes the head with writeHead(status, headers), so an empty answer can leave out its Content-Type', async () => {
    const empty = await fetch(`${url}/empty`);
    expect(empty.status).toBe(200);
    expect(empty.headers.get('content-length')).toBe('0');
    expect(empty.headers.has('content-type')).toBe(false);
    // What omitDefaultContentType works around: when this fails, the adapter no longer adds the
    // default and the workaround can go.
    const withDefault = await fetch(`${url}/empty-default`);
    expect(withDefault.headers.get('content-type')).toBe('text/plain; charset=UTF-8');
  });
});
