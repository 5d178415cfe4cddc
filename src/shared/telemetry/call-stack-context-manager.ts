import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api';

/**
 * A context manager that keeps the active context for the synchronous extent of `with` only, with no
 * async hooks: what the API process runs with (tracing-sdk.ts).
 *
 * Why: Node 20's AsyncLocalStorage, once any context has been entered, runs a hook on every promise
 * the process makes and takes V8 off its fast paths for `await`, sampled request or not. Measured on
 * the API (2026-11-25, readAll, one core): tracing on at 1 % sampling with AsyncLocalStorage cost 20–35 %
 * of the throughput, at 0 % (no context ever entered) 9–13 %. The API's requests are short and their
 * trace is a few spans the service starts itself with an explicit parent (the server span, the enqueue
 * whose context the job carries); the long part of a request, the job, runs in the worker, which
 * keeps AsyncLocalStorage so that its batches' SQL, Redis commands and webhook calls are children of
 * the job's span. In the API, a span started inside `with`'s synchronous extent (the enqueue's, inSpan)
 * finds its parent; one started after an `await` would not, which is why the API hands the request's
 * context to its handlers explicitly (`traceContext`) and runs no instrumentation.
 */
export class CallStackContextManager implements ContextManager {
  #active: Context = ROOT_CONTEXT;

  active(): Context {
    return this.#active;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const previous = this.#active;
    this.#active = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.#active = previous;
    }
  }

  /** A function runs in `context` whenever it is called; anything else is returned as it is. */
  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const manager = this;
    const bound = function (this: unknown, ...args: unknown[]) {
      return manager.with(context, () => (target as (...a: unknown[]) => unknown).apply(this, args));
    };
    return bound as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#active = ROOT_CONTEXT;
    return this;
  }
}
