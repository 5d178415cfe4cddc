import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Link,
  ProxyTracerProvider,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

/**
 * The service's own spans and the trace context carried in job data, written against the
 * OpenTelemetry API only. With no SDK started (no endpoint: telemetry.preload.ts) every call here
 * is the API's no-op: no span is recorded, nothing is injected, and the cost is a function call.
 */

const tracer = trace.getTracer('merchant-rewards-gateway');

const spanKinds = { producer: SpanKind.PRODUCER, consumer: SpanKind.CONSUMER, internal: SpanKind.INTERNAL } as const;

/** What a job's data carries of the request that made it (W3C Trace Context). */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** True when this process started the SDK (an endpoint is set); false means every span is a no-op. */
export function tracingEnabled(): boolean {
  const provider = trace.getTracerProvider();
  const delegate = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  return 'forceFlush' in delegate;
}

/** The active trace context as `traceparent` (and `tracestate`), to store with a single cancel; {} when none. */
export function currentTraceCarrier(): TraceCarrier {
  const carrier: TraceCarrier = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The context a carrier holds (a caller's header, a single cancel's request), or none. */
function contextFrom(carrier: TraceCarrier | undefined): Context {
  if (carrier?.traceparent === undefined) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** A link to each carried context: a coalesced batch serves many requests, each in its own trace. */
export function linksTo(carriers: readonly (TraceCarrier | undefined)[]): Link[] {
  const links: Link[] = [];
  for (const carrier of carriers) {
    if (carrier?.traceparent === undefined) continue;
    const spanContext = trace.getSpanContext(contextFrom(carrier));
    if (spanContext && isSpanContextValid(spanContext)) links.push({ context: spanContext });
  }
  return links;
}

export interface SpanOptions {
  links?: Link[];
  attributes?: Attributes;
  kind?: 'producer' | 'consumer' | 'internal';
  /** Start a trace of its own (with `links`), whatever span is active. */
  root?: boolean;
  /** Errors that are not failures (a job handing itself back to its queue): the span ends unmarked. */
  notFailures?: (error: unknown) => boolean;
}

/**
 * Runs `work` in a new active span, ended when it settles; an error marks it and is thrown on.
 * Attributes are the service's own (ids, kinds, counts): never a secret, signature, token or player.
 */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.root ? ROOT_CONTEXT : context.active();
  return tracer.startActiveSpan(
    name,
    {
      kind: spanKinds[options.kind ?? 'internal'],
      links: options.links,
      attributes: options.attributes,
    },
    parent,
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        if (!options.notFailures?.(error)) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
        }
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** A span made by the service itself around an incoming request, and the context its work runs in. */
export interface ServerSpan {
  span: Span;
  /** The caller's context (from its `traceparent`, or none) with this span set in it. */
  context: Context;
}

/**
 * Starts a server span: a child of the caller's trace when its `traceparent` names one, else the root
 * of a trace of its own; the sampler decides here, once. Ended by the caller (`endSpan`).
 */
export function startServerSpan(name: string, attributes: () => Attributes, carrier: TraceCarrier): ServerSpan {
  const parent = contextFrom(carrier);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER }, parent);
  // Made only for a span that is recorded: nine in ten are not, at 10 % sampling.
  if (span.isRecording()) span.setAttributes(attributes());
  return { span, context: trace.setSpan(parent, span) };
}

/** A trace context, as the API hands it to the work it starts after an await. */
export type TraceContext = Context;

/** The active trace context, to make a later step (after an await) in it: `runInContext`. */
export function activeContext(): TraceContext {
  return context.active();
}

/** Runs `work` with `traceContext` active: the spans it starts (the enqueue's) are its children. */
export function runInContext<T>(traceContext: Context, work: () => T): T {
  return context.with(traceContext, work);
}

/** Sets the last attributes of a span, marks it failed when `failed`, and ends it. */
export function endSpan(span: Span, attributes: Attributes, failed: boolean): void {
  span.setAttributes(attributes);
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** `trace_id` and `span_id` of a span, for log lines; {} for an invalid one. */
export function traceFieldsOf(span: Span): { trace_id?: string; span_id?: string } {
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

/**
 * True when a span is active but not sampled: the request's trace will not be recorded, only its
 * decision carried on (a job's data then needs the carrier, not a span of its own).
 */
export function activeSpanUnsampled(): boolean {
  const span = trace.getSpan(context.active());
  return span !== undefined && !span.isRecording();
}

/** Adds the service's own attributes (ids, kinds, counts) to the active span, if any. */
export function annotateActiveSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** Links the active span, if any, to each carried context (a batch's requests, each in its own trace). */
export function linkActiveSpan(carriers: readonly (TraceCarrier | undefined)[]): void {
  const span = trace.getActiveSpan();
  if (span) for (const link of linksTo(carriers)) span.addLink(link);
}

/** Marks the active span, if any, failed (the error's name, never its message: it may hold ids). */
export function markActiveSpanFailed(error: unknown): void {
  trace.getActiveSpan()?.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.name : 'error',
  });
}

/** `trace_id` and `span_id` of the active span, for log lines; {} outside any span. */
export function activeTraceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  return span === undefined ? {} : traceFieldsOf(span);
}

/** Sends the spans still buffered (shutdown's last step); nothing when tracing is off. */
export async function flushTraces(): Promise<void> {
  const provider = trace.getTracerProvider();
  const delegate = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  if ('forceFlush' in delegate && typeof delegate.forceFlush === 'function') await delegate.forceFlush();
}
