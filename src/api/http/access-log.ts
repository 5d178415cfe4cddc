import type { Context } from 'hono';
import { routePath } from 'hono/route';
import type { AppEnv } from '../context.js';

/**
 * One log line and one metrics observation for an answered request, labelled by route pattern (not raw
 * path). Called by the request-context middleware once the handlers are done (an error has become its
 * answer by then), with the time the request started (`performance.now()`).
 */
export function logRequest(c: Context<AppEnv>, started: number): void {
  const ms = performance.now() - started;
  // The last matched route is the handler's pattern; a request that only met the '*' middleware matched none.
  const lastPattern = routePath(c, -1);
  const route = lastPattern === '*' || lastPattern === '/*' ? 'unmatched' : lastPattern;
  const status = c.res.status;
  const { metrics, logger } = c.get('deps');
  metrics.observeHttpRequest(c.req.method, route, status, ms / 1000);
  // The process logger with both ids as fields, rather than the request's child logger: one line,
  // no child made for it (see request-logger.ts).
  logger.info(
    {
      requestId: c.get('requestId'),
      method: c.req.method,
      route,
      status,
      ms: Math.round(ms * 10) / 10,
      merchantId: c.get('merchant')?.id,
      jobId: c.get('jobId'),
    },
    'request',
  );
}
