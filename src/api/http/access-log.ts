import type { Span } from '@opentelemetry/api';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { Metrics } from '../../shared/telemetry/metrics.js';
import { traceFieldsOf } from '../../shared/telemetry/trace-context.js';

/** What the line says of one answered request. */
export interface AnsweredRequest {
  requestId: string;
  method: string;
  /** The matched route's pattern (not the raw path), or `unmatched`. */
  route: string;
  status: number;
  /** Time from the request's start to its answer. */
  ms: number;
  merchantId: string | undefined;
  jobId: string | undefined;
  /** The request's server span, when tracing is on: its ids go on the line. */
  span: Span | undefined;
}

/**
 * One line and one metrics observation per answered request, labelled by route pattern (not raw path).
 * The line is the logger's own `info` line (its time, base fields and destination: shared/logger.ts),
 * so it is written as every other line is, asynchronously.
 */
export class AccessLog {
  readonly #logger: Logger;
  readonly #metrics: Metrics;

  constructor(logger: Logger, metrics: Metrics) {
    this.#logger = logger;
    this.#metrics = metrics;
  }

  /** Called by the request-context middleware once the handlers are done (an error has become its answer by then). */
  record(request: AnsweredRequest): void {
    const { requestId, method, route, status, ms, merchantId, jobId, span } = request;
    this.#metrics.observeHttpRequest(method, route, status, ms / 1000);
    // A sampled request's trace ids first, where pino's mixin puts the active span's on every other line.
    const traceFields = span === undefined ? undefined : traceFieldsOf(span);
    this.#logger.info(
      { ...traceFields, requestId, method, route, status, ms: Math.round(ms * 10) / 10, merchantId, jobId },
      'request',
    );
  }

  /**
   * Hands what the logger's destination still holds to its output, resolved once written: the API's
   * shutdown calls it after the servers have closed, so the lines of the last requests are not lost.
   */
  flush(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#logger.flush((error) => (error ? reject(error) : resolve()));
    });
  }
}
