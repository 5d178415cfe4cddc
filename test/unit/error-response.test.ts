import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errorResponse } from '../../src/shared/errors/error-response.js';
import { AppError } from '../../src/shared/errors/errors.js';
import { createHealthApp } from '../../src/worker/health-server.js';

function answering(error: AppError): Hono {
  const app = new Hono();
  app.get('/', () => {
    throw error;
  });
  app.onError((thrown, c) => errorResponse(c, thrown as AppError));
  return app;
}

describe('errorResponse', () => {
  it('answers the catalogue status and body', async () => {
    const response = await answering(new AppError('FORBIDDEN', 'Cross-site request refused')).request('/');
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ errorCode: 4, errorMessage: 'Cross-site request refused' });
  });

  it('carries the headers the error names', async () => {
    const error = new AppError('AUTHENTICATION_FAILED', undefined, {
      headers: { 'WWW-Authenticate': 'Basic realm="queues"' },
      logDetail: 'not in the body',
    });
    const response = await answering(error).request('/');
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Basic realm="queues"');
    expect(await response.json()).toEqual({ errorCode: 2, errorMessage: 'Authentication failed' });
  });

  it('gives every 429 and 503 a Retry-After, one second unless its raiser said otherwise, and no other error one', async () => {
    for (const name of ['RATE_LIMITED', 'SERVICE_UNAVAILABLE'] as const) {
      expect((await answering(new AppError(name)).request('/')).headers.get('retry-after')).toBe('1');
    }
    for (const name of ['CONFLICT', 'INTERNAL_ERROR', 'INVALID_REQUEST'] as const) {
      expect((await answering(new AppError(name)).request('/')).headers.get('retry-after')).toBeNull();
    }
  });

  it('turns retryAfterSeconds into Retry-After, beside other headers', async () => {
    const error = new AppError('RATE_LIMITED', undefined, { retryAfterSeconds: 3, headers: { 'X-Extra': 'yes' } });
    const response = await answering(error).request('/');
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(response.headers.get('x-extra')).toBe('yes');
  });

  it('adds no header of its own', async () => {
    const response = await answering(new AppError('NOT_FOUND')).request('/');
    expect(response.headers.get('retry-after')).toBeNull();
    expect(response.headers.get('www-authenticate')).toBeNull();
  });
});

describe('worker health server', () => {
  it('answers an unknown path with the catalogue NOT_FOUND body', async () => {
    // The 404 path touches none of the dependencies.
    const app = createHealthApp({} as Parameters<typeof createHealthApp>[0]);
    const response = await app.request('/nope');
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ errorCode: 10, errorMessage: 'Route not found' });
  });
});
