import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';
import { RequestLogger } from '../request-logger.js';

/** A caller's id is kept when it is short and plain enough to put in a log line; else we make one. */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header('x-request-id');
    const id = given && ACCEPTABLE_REQUEST_ID.test(given) ? given : randomUUID();
    c.set('requestId', id);
    c.set('logger', new RequestLogger(c.get('deps').logger, { requestId: id }));
    await next();
    // Set on the response as it leaves, whichever produced it (a handler, or onError for a thrown error).
    c.res.headers.set('X-Request-Id', id);
  };
}
