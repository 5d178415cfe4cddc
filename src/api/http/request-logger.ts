import type { Logger } from '../../shared/telemetry/logger.js';

type Fields = Record<string, unknown>;

/** What a handler logs with: a line of fields and a message, at one of three levels. */
export interface RequestLog {
  info(fields: Fields, message: string): void;
  warn(fields: Fields, message: string): void;
  error(fields: Fields, message: string): void;
}

/**
 * The log of one request, bound to its request id and, once authenticated, to its merchant. A pino
 * child logger costs about as much as writing a line, and most requests write only their access line
 * (which names both ids itself), so the child is made when a handler first writes, not per request.
 * For the same reason `with` only links the new bindings to the log they extend: they are merged when
 * a line is first written, not per request (a sampled request's trace ids and then its merchant made
 * a merged copy on every such request: ~4 µs each with tracing at 100 %, bench/README.md).
 */
export class RequestLogger implements RequestLog {
  #child: Logger | undefined;

  constructor(
    private readonly base: Logger,
    private readonly bindings: Fields,
    /** The log these bindings extend (`with`), whose own come first. */
    private readonly extended?: RequestLogger,
  ) {}

  /** The same log with more bindings (the merchant, once known). */
  with(more: Fields): RequestLogger {
    return new RequestLogger(this.base, more, this);
  }

  info(fields: Fields, message: string): void {
    this.child().info(fields, message);
  }

  warn(fields: Fields, message: string): void {
    this.child().warn(fields, message);
  }

  error(fields: Fields, message: string): void {
    this.child().error(fields, message);
  }

  /** Every binding of this log and the logs it extends, the latest winning. */
  private allBindings(): Fields {
    return this.extended === undefined ? this.bindings : { ...this.extended.allBindings(), ...this.bindings };
  }

  private child(): Logger {
    this.#child ??= this.base.child(this.allBindings());
    return this.#child;
  }
}
