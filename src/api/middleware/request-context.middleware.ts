import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
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
    // The last matched route is the handler's pattern; a request that only met the '*' middleware matched none.
    const lastPattern = routePath(c, -1);
    deps.accessLog.record({
      requestId: c.get('requestId'),
      method: c.req.method,
      route: lastPattern === '*' || lastPattern === '/*' ? 'unmatched' : lastPattern,
      status: c.res.status,
      ms: performance.now() - started,
      merchantId: c.get('merchant')?.id,
      jobId: c.get('jobId'),
    });
  };
}
