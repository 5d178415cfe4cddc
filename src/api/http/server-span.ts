import type { Context } from 'hono';
import { endSpan, type ServerSpan, startServerSpan } from '../../shared/telemetry/trace-context.js';
import type { AppEnv } from '../context.js';

/**
 * The server span of one request, made by the request-context middleware rather than by
 * `@opentelemetry/instrumentation-http`'s incoming side (the API runs no instrumentation: tracing-sdk.ts). That
 * instrumentation wraps every request in its own context and binds the request's and the response's
 * event emitters to it, sampled or not: with tracing on at 10 % sampling it doubled the API's CPU per
 * request (readAll 71 → 147 µs, signed cancel 101 → 194 µs, 2026-11-25). Here the sampler decides once,
 * when the span starts, and the span's context is handed to the handlers in `c` (`traceContext`): the
 * enqueue starts its span under it (enqueue-cancellation.ts), and an unsampled request's job carries the
 * decision, so that its worker follows it. A span that is not recorded gets no attributes.
 *
 * Attributes: the method, the path without its query string (GET /betSlip carries the signature and the
 * session token there) and, at the end, the matched route and the status.
 */

/** Probes and scrapes are not merchants' work: never traced. */
const UNTRACED_PATHS = /^\/(healthz|readyz|metrics)(\/|$)/;

export function startRequestSpan(c: Context<AppEnv>): ServerSpan | undefined {
  const path = c.req.path;
  if (UNTRACED_PATHS.test(path)) return undefined;
  const method = c.req.method;
  const traceparent = c.req.header('traceparent');
  return startServerSpan(
    method,
    () => ({ 'http.request.method': method, 'url.path': path, 'url.scheme': 'http' }),
    traceparent === undefined ? {} : { traceparent, tracestate: c.req.header('tracestate') },
  );
}

/** Names a recorded span after its route (`POST /betSlip`), as HTTP server spans are named, and ends it. */
export function endRequestSpan({ span }: ServerSpan, method: string, route: string, status: number): void {
  if (!span.isRecording()) return;
  span.updateName(`${method} ${route}`);
  endSpan(span, { 'http.route': route, 'http.response.status_code': status }, status >= 500);
}
