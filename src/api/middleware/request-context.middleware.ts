import type { MiddlewareHandler } from 'hono';
import type { ApiDeps, AppEnv } from '../context.js';
import { assignRequestId } from '../http/request-id.js';
import { answerHeadersFromNode } from '../node-http.js';

/**
 * What every request carries, set up in one middleware: the process's dependencies, request headers
 * read from Node's (node-http.ts), the request id and logger, and, once the handlers are done, the
 * access-log line and metrics. One step of hono's middleware chain instead of three: each step is an
 * async function, a promise and a bound `next` per request, which counted on the API's fixed cost per
 * request (/healthz).
 */
export function requestContext(deps: ApiDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    c.set('deps', deps);
    answerHeadersFromNode(c);
    const finishHeaders = assignRequestId(c);
    await next();
    finishHeaders();
    deps.accessLog.record(c, started);
  };
}
