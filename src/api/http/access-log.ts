import type { Context } from 'hono';
import { routePath } from 'hono/route';
import { pino } from 'pino';
import type { Logger } from '../../shared/logger.js';
import type { Metrics } from '../../shared/metrics.js';
import { activeTraceFields, tracingEnabled } from '../../shared/telemetry/trace-context.js';
import type { AppEnv } from '../context.js';

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
  readonly #traced: boolean;
  /** Lines of this turn of the event loop, written together at its end (`#flush`). */
  #pending = '';

  constructor(logger: Logger, metrics: Metrics) {
    this.#logger = logger;
    this.#metrics = metrics;
    const own = logger as unknown as Record<symbol, unknown>;
    this.#destination = own[pino.symbols.streamSym] as LineDestination;
    this.#time = own[pino.symbols.timeSym] as () => string;
    const bindings = JSON.stringify(logger.bindings());
    this.#base = bindings === '{}' ? '' : `,${bindings.slice(1, -1)}`;
    this.#level = logger.levels.values.info as number;
    this.#traced = tracingEnabled();
  }

  /**
   * Called by the request-context middleware once the handlers are done (an error has become its
   * answer by then), with the time the request started (`performance.now()`).
   */
  record(c: Context<AppEnv>, started: number): void {
    const ms = performance.now() - started;
    // The last matched route is the handler's pattern; a request that only met the '*' middleware matched none.
    const lastPattern = routePath(c, -1);
    const route = lastPattern === '*' || lastPattern === '/*' ? 'unmatched' : lastPattern;
    const status = c.res.status;
    const method = c.req.method;
    this.#metrics.observeHttpRequest(method, route, status, ms / 1000);
    if (!this.#logger.isLevelEnabled('info')) return;

    const merchantId = c.get('merchant')?.id;
    const jobId = c.get('jobId');
    // Every string is JSON-encoded, also those whose alphabet is known (a request id passed its pattern,
    // a merchant id is a stored UUID): a line that cannot be parsed is worse than a microsecond.
    const line =
      `{"level":${this.#level}${this.#time()}${this.#base}${this.#traced ? traceFields() : ''}` +
      `,"requestId":${JSON.stringify(c.get('requestId'))},"method":${JSON.stringify(method)}` +
      `,"route":${JSON.stringify(route)},"status":${status},"ms":${Math.round(ms * 10) / 10}` +
      `${merchantId === undefined ? '' : `,"merchantId":${JSON.stringify(merchantId)}`}` +
      `${jobId === undefined ? '' : `,"jobId":${JSON.stringify(jobId)}`},"msg":"request"}\n`;
    if (this.#pending === '') setImmediate(this.#flush);
    this.#pending += line;
  }

  /**
   * One write for the lines of every request answered in a turn of the event loop: a busy API answers
   * dozens per turn, and each write into the destination costs a length count and a buffer append of
   * its own. The lines wait for the end of the turn only, not for a buffer to fill: a crash loses the
   * lines of the turn it happens in.
   */
  readonly #flush = (): void => {
    const lines = this.#pending;
    this.#pending = '';
    this.#destination.write(lines);
  };
}

/** `trace_id` and `span_id` of the active span, as pino's mixin writes them on every other line. */
function traceFields(): string {
  const { trace_id: traceId, span_id: spanId } = activeTraceFields();
  return traceId === undefined ? '' : `,"trace_id":"${traceId}","span_id":"${spanId}"`;
}
