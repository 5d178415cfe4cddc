import type { Span } from '@opentelemetry/api';
import { pino } from 'pino';
import type { Logger } from '../../shared/logger.js';
import type { Metrics } from '../../shared/metrics.js';
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

/** What the access line is written to: the logger's own destination. */
interface LineDestination {
  write(line: string): unknown;
}

/**
 * One line and one metrics observation per answered request, labelled by route pattern (not raw path).
 *
 * The line is the one pino would write for `logger.info({requestId, method, route, status, ms,
 * merchantId, jobId}, 'request')` — the same fields in the same order, the same time format, the same
 * destination, only at `info` or below — but put together here as one template string. Through pino
 * it was the largest cost of the API's own per request at the default level (the issue of 2026-11-24
 * measured a quarter of the throughput; a profile of readAll put pino's formatting, its redaction
 * check and the object it builds at ~5 % of busy time): every field of this line is known, none can
 * hold a secret, so there is nothing for pino's generic path to do.
 */
export class AccessLog {
  readonly #logger: Logger;
  readonly #metrics: Metrics;
  readonly #destination: LineDestination;
  /** `,"time":"…"` as the logger writes it (logger.ts formats it once per millisecond). */
  readonly #time: () => string;
  /** The logger's base fields (`"service":"api"`), serialised once. */
  readonly #base: string;
  readonly #level: number;
  /** Lines not yet handed to the destination (`flush`). */
  #pending = '';
  #flushTimer: NodeJS.Timeout | undefined;

  constructor(logger: Logger, metrics: Metrics) {
    this.#logger = logger;
    this.#metrics = metrics;
    const own = logger as unknown as Record<symbol, unknown>;
    this.#destination = own[pino.symbols.streamSym] as LineDestination;
    this.#time = own[pino.symbols.timeSym] as () => string;
    const bindings = JSON.stringify(logger.bindings());
    this.#base = bindings === '{}' ? '' : `,${bindings.slice(1, -1)}`;
    this.#level = logger.levels.values.info as number;
  }

  /** Called by the request-context middleware once the handlers are done (an error has become its answer by then). */
  record(request: AnsweredRequest): void {
    const { requestId, method, route, status, ms, merchantId, jobId, span } = request;
    this.#metrics.observeHttpRequest(method, route, status, ms / 1000);
    if (!this.#logger.isLevelEnabled('info')) return;

    // Every string is JSON-encoded, also those whose alphabet is known (a request id passed its pattern,
    // a merchant id is a stored UUID): a line that cannot be parsed is worse than a microsecond.
    const line =
      `{"level":${this.#level}${this.#time()}${this.#base}${span === undefined ? '' : traceFields(span)}` +
      `,"requestId":${JSON.stringify(requestId)},"method":${JSON.stringify(method)}` +
      `,"route":${JSON.stringify(route)},"status":${status},"ms":${Math.round(ms * 10) / 10}` +
      `${merchantId === undefined ? '' : `,"merchantId":${JSON.stringify(merchantId)}`}` +
      `${jobId === undefined ? '' : `,"jobId":${JSON.stringify(jobId)}`},"msg":"request"}\n`;
    this.#pending += line;
    if (this.#pending.length >= FLUSH_AT_CHARACTERS) this.flush();
    else this.#flushTimer ??= setTimeout(this.flush, FLUSH_AFTER_MS);
  }

  /**
   * Hands the lines gathered so far to the destination in one write. Called FLUSH_AFTER_MS after the
   * first of them, or once they fill FLUSH_AT_CHARACTERS, and by the API's shutdown: a busy API answers
   * hundreds of requests in that time, and each write into the destination (a length count, a buffer
   * append, a system call on a pool thread) cost 4–5 % of its busy time serving /betSlip when made for
   * every turn of the event loop. A process that crashes loses the lines of its last FLUSH_AFTER_MS.
   */
  readonly flush = (): void => {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#pending === '') return;
    const lines = this.#pending;
    this.#pending = '';
    this.#destination.write(lines);
  };
}

/** How long a line may wait for others to leave with it. */
const FLUSH_AFTER_MS = 50;
/** Lines of this many characters (~200 requests) leave at once. */
const FLUSH_AT_CHARACTERS = 64 * 1024;

/** `trace_id` and `span_id` of the request's span, where pino's mixin writes the active span's on every other line. */
function traceFields(span: Span): string {
  const { trace_id: traceId, span_id: spanId } = traceFieldsOf(span);
  return traceId === undefined ? '' : `,"trace_id":"${traceId}","span_id":"${spanId}"`;
}
