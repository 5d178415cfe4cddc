import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { traceFieldsOf, tracingEnabled } from '../../shared/telemetry/trace-context.js';
import type { ApiDeps, AppEnv } from '../context.js';
import { answerHeadersFromNode } from '../library-bypasses/node-http.js';
import { assignRequestId } from './request-id.js';
import { endRequestSpan, startRequestSpan } from './server-span.js';

/**
 * What every request carries, set up in one middleware: the process's dependencies, request headers
 * read from Node's (library-bypasses/node-http.ts), the request id and logger, and, once the handlers are done, the
 * access-log line and metrics. One step of hono's middleware chain instead of three: each step is an
 * async function, a promise and a bound `next` per request, which counted on the API's fixed cost per
 * request (/healthz). With tracing on, the request's server span too (http/server-span.ts), whose ids
 * a sampled request's log lines carry.
 */
export function requestContext(deps: ApiDeps): MiddlewareHandler<AppEnv> {
  const traced = tracingEnabled();
  return async (c, next) => {
    const started = performance.now();
    c.set('deps', deps);
    answerHeadersFromNode(c);
    const finishHeaders = assignRequestId(c);
    const serverSpan = traced ? startRequestSpan(c) : undefined;
    // Asked once: an ended span says it is no longer recording.
    const sampled = serverSpan?.span.isRecording() === true;
    if (serverSpan !== undefined) {
      // Handlers start their spans under it explicitly (the enqueue: enqueue-cancellation.ts): the
      // middleware enters no context of its own.
      c.set('traceContext', serverSpan.context);
      if (sampled) c.set('logger', c.get('logger').with(traceFieldsOf(serverSpan.span)));
    }
    await next();
    finishHeaders();
    // The last matched route is the handler's pattern; a request that only met the '*' middleware matched none.
    const lastPattern = routePath(c, -1);
    const route = lastPattern === '*' || lastPattern === '/*' ? 'unmatched' : lastPattern;
    const { method } = c.req;
    const status = c.res.status;
    if (serverSpan !== undefined) endRequestSpan(serverSpan, method, route, status);
    deps.accessLog.record({
      requestId: c.get('requestId'),
      method,
      route,
      status,
      ms: performance.now() - started,
      merchantId: c.get('merchant')?.id,
      jobId: c.get('jobId'),
      // The ids of a sampled request only: an unsampled one's trace is recorded nowhere.
      span: sampled ? serverSpan?.span : undefined,
    });
  };
}
