import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { Handler } from 'hono';
import type { BlankEnv } from 'hono/types';
import { describe, expect, it } from 'vitest';

/**
 * src/api/library-bypasses/json-body-validation.ts validates a route's JSON body in the handler's own
 * step instead of the library's validator, relying on @hono/zod-openapi and hono for the rest: what
 * `c.req.addValidatedData('json', …)` stores is what `c.req.valid('json')` returns to the handler; a
 * route registered with `hide: true` answers but stays out of the OpenAPI document, and
 * `openAPIRegistry.registerPath` documents it as `app.openapi` would; the library's `openapi` is an
 * arrow-function property, callable once saved apart from the app. If an upgrade changes any of that,
 * this fails here rather than in every validated route.
 */
const Body = z.object({ amount: z.number() });
const route = createRoute({
  method: 'post',
  path: '/documented',
  request: { body: { required: true, content: { 'application/json': { schema: Body } } } },
  responses: { 200: { description: 'OK', content: { 'application/json': { schema: Body } } } },
});

describe('hono’s validated data', () => {
  it('c.req.valid("json") returns the very value c.req.addValidatedData("json", …) stored', async () => {
    const app = new OpenAPIHono();
    const stored = { amount: 42 };
    let returned: unknown;
    const handler: Handler<BlankEnv, '/', { out: { json: { amount: number } } }> = (c) => {
      c.req.addValidatedData('json', stored);
      returned = c.req.valid('json');
      return c.json(c.req.valid('json'));
    };
    app.post('/', handler);
    const response = await app.request('/', { method: 'POST', body: '{"amount":1}' });
    expect(await response.json()).toEqual({ amount: 42 });
    expect(returned).toBe(stored);
  });
});

describe('@hono/zod-openapi registration', () => {
  it('keeps a hide: true route out of the document while it still answers', async () => {
    const app = new OpenAPIHono();
    app.openapi({ ...route, path: '/hidden', hide: true }, (c) => c.json(c.req.valid('json'), 200));
    app.openapi({ ...route, path: '/shown' }, (c) => c.json(c.req.valid('json'), 200));
    const document = app.getOpenAPIDocument({ openapi: '3.0.0', info: { title: 't', version: '1' } });
    expect(Object.keys(document.paths ?? {})).toEqual(['/shown']);
    const response = await app.request('/hidden', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"amount":3}',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ amount: 3 });
  });

  it('documents a route by openAPIRegistry.registerPath exactly as app.openapi does', () => {
    const info = { openapi: '3.0.0', info: { title: 't', version: '1' } } as const;
    const byOpenapi = new OpenAPIHono();
    byOpenapi.openapi(route, (c) => c.json(c.req.valid('json'), 200));
    const byRegistry = new OpenAPIHono();
    byRegistry.openAPIRegistry.registerPath(route);
    expect(byRegistry.getOpenAPIDocument(info)).toEqual(byOpenapi.getOpenAPIDocument(info));
  });

  it('app.openapi works when saved apart from its app (an arrow-function property)', async () => {
    const app = new OpenAPIHono();
    const register = app.openapi;
    register({ ...route, path: '/saved' }, (c) => c.json(c.req.valid('json'), 200));
    const response = await app.request('/saved', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"amount":9}',
    });
    expect(await response.json()).toEqual({ amount: 9 });
    expect(
      Object.keys(app.getOpenAPIDocument({ openapi: '3.0.0', info: { title: 't', version: '1' } }).paths ?? {}),
    ).toEqual(['/saved']);
  });
});
