import type { Context } from 'hono';
import { AppError } from '../../shared/errors/errors.js';
import type { AppEnv } from '../context.js';
import { nodeRequest } from '../library-bypasses/node-http.js';

const JSON_MEDIA_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;.*)?$/i;

/**
 * A body must be JSON; a request without a Content-Type is read as JSON too (docs/design.md §3). Called
 * by the request-body middleware for every request that may carry a body (not GET or HEAD), before a
 * byte of it is read.
 */
export function requireJsonContentType(c: Context<AppEnv>, method: string): void {
  const contentType = c.req.header('content-type');
  if (contentType && !JSON_MEDIA_TYPE.test(contentType)) throw new AppError('UNSUPPORTED_MEDIA_TYPE');
  if (!contentType && method === 'POST') {
    // Let the route's JSON validator read a body sent without a Content-Type (it reads the header
    // through `c.req.header`, which answers from Node's headers when there are any: library-bypasses/node-http.ts).
    const incoming = nodeRequest(c);
    if (incoming) incoming.headers['content-type'] = 'application/json';
    else c.req.raw.headers.set('content-type', 'application/json');
  }
}
