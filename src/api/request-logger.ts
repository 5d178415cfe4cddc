import type { Logger } from '../shared/logger.js';

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
 */
export class RequestLogger implements RequestLog {
  #child: Logger | undefined;

  constructor(
    private readonly base: Logger,
    private readonly bindings: Fields,
    /** Bindings added by `with`, merged only when a line is written (most requests write none). */
    private readonly more?: Fields,
  ) {}

  /** The same log with more bindings (the merchant, once known). */
  with(more: Fields): RequestLogger {
    return new RequestLogger(
      this.base,
      this.more === undefined ? this.bindings : { ...this.bindings, ...this.more },
      more,
    );
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

  private child(): Logger {
    this.#child ??= this.base.child(this.more === undefined ? this.bindings : { ...this.bindings, ...this.more });
    return this.#child;
  }
}
