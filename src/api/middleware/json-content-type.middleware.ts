import type { MiddlewareHandler } from 'hono';
import { AppError } from '../../shared/errors.js';
import type { AppEnv } from '../context.js';
import { requestHeader } from '../node-http.js';

const JSON_MEDIA_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;.*)?$/i;

/** A body must be JSON; a request without a Content-Type is read as JSON too (docs/design.md §3). */
export function requireJsonContentType(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const method = c.req.method;
    // Nothing to check without a body; probes and scrapes (GET) pass on at once.
    if (method === 'GET' || method === 'HEAD') return next();
    const contentType = requestHeader(c, 'content-type');
    if (contentType && !JSON_MEDIA_TYPE.test(contentType)) throw new AppError('UNSUPPORTED_MEDIA_TYPE');
    if (!contentType && method === 'POST') {
      // Let the route's JSON validator read a body sent without a Content-Type.
      c.req.raw.headers.set('content-type', 'application/json');
    }
    await next();
  };
}
