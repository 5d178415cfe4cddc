import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { AppEnv } from '../context.js';

/** One log line and one metrics observation per request, labelled by route pattern (not raw path). */
export function accessLog(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
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
  };
}
