import { createRequire, syncBuiltinESMExports } from 'node:module';
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Link,
  propagation,
  SpanKind,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { TelemetrySettings } from '../config/config.js';
import { RedactingSpanExporter } from './span-redaction.js';

/**
 * The OpenTelemetry SDK, started by telemetry.preload.ts before the service's own modules load, and
 * only when an endpoint is set: this module (and the SDK it loads) is never imported otherwise.
 */

/**
 * BullMQ traces its own bookkeeping too (shared/queue/queue-telemetry.ts): checking for stalled jobs,
 * renewing locks, pausing, closing, removing a job. Those are INTERNAL spans, and made outside any trace
 * (a worker's timers, an API call after an await) each would be a trace of its own, sampled like a
 * request, every few seconds while the queues are idle. So a root INTERNAL span with no link is never
 * sampled, and under a parent-based sampler neither is anything made inside it (its Redis commands).
 * The service's own root spans are a request's (SERVER), a job added outside any request (PRODUCER)
 * and a coalesced write, which links to the requests it serves.
 */
class NoUnlinkedInternalRoots implements Sampler {
  constructor(private readonly sampler: Sampler) {}

  shouldSample(
    parent: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    const parentSpan = trace.getSpanContext(parent);
    const isRoot = parentSpan === undefined || !isSpanContextValid(parentSpan);
    if (isRoot && kind === SpanKind.INTERNAL && links.length === 0) return { decision: SamplingDecision.NOT_RECORD };
    return this.sampler.shouldSample(parent, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `NoUnlinkedInternalRoots{${this.sampler.toString()}}`;
  }
}

function samplerFor(settings: TelemetrySettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.samplerRatio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

const isApiEntryPoint = (entryPoint: string | undefined) =>
  entryPoint !== undefined && /[/\\]api[/\\]index\.[jt]s$/.test(entryPoint);

/** `rewards-gateway-api` or `-worker`, from the entry point being run, unless OTEL_SERVICE_NAME names it. */
function serviceName(settings: TelemetrySettings, entryPoint: string | undefined): string {
  if (settings.serviceName) return settings.serviceName;
  if (entryPoint && /[/\\]worker[/\\]index\.[jt]s$/.test(entryPoint)) return 'rewards-gateway-worker';
  if (isApiEntryPoint(entryPoint)) return 'rewards-gateway-api';
  return 'rewards-gateway';
}

export function startTracing(settings: TelemetrySettings & { tracesUrl: string }, entryPoint: string | undefined) {
  const exporter =
    settings.protocol === 'http/json'
      ? new JsonTraceExporter({ url: settings.tracesUrl })
      : new ProtobufTraceExporter({ url: settings.tracesUrl });
  const name = serviceName(settings, entryPoint);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': name }),
    sampler: new NoUnlinkedInternalRoots(samplerFor(settings)),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new RedactingSpanExporter(exporter),
        // The SDK reads none of the OTEL_BSP_* variables itself: config.ts does.
        scheduledDelayMillis: settings.exportDelayMs,
        maxQueueSize: settings.exportQueueSize,
        maxExportBatchSize: settings.exportBatchSize,
        exportTimeoutMillis: settings.exportTimeoutMs,
      }),
    ],
  });
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  // The SDK's own context manager in both processes: on Node 24, AsyncLocalStorage runs on
  // AsyncContextFrame (no promise hook per await), so the active context follows a request's awaits
  // for the price of a `context.with`.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  if (isApiEntryPoint(entryPoint)) {
    // The API records only the spans it makes itself with explicit parents (the request's server span,
    // src/api/http/server-span.ts, and the enqueue) and runs no instrumentation: the pg and ioredis
    // wrappers cost ~6 % of readAll (2026-11-25, Node 20) while the Postgres and Redis spans of a
    // request's work are the worker's, where the job runs.
    return provider;
  }
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes (/healthz, /metrics) are the only requests the worker serves.
        disableIncomingRequestInstrumentation: true,
        // Outgoing calls are traced only inside a span (a webhook delivery), never on their own.
        requireParentforOutgoingSpans: true,
      }),
      // Only within a job's span: the workers' polling and the metrics scrapes make none.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({
        requireParentSpan: true,
        // The command only: keys name merchants' idempotency keys and replay guards, values carry jobs.
        dbStatementSerializer: (command) => command,
      }),
    ],
  });
  // The instrumentations patch CommonJS modules as they are required; the service imports them as ES
  // modules, which reuse a CommonJS module already loaded. Loading them here, after the patches are
  // registered, is what puts the patched copies in front of the service.
  const load = createRequire(import.meta.url);
  load('node:http');
  load('node:https');
  load('pg');
  load('ioredis');
  syncBuiltinESMExports();
  return provider;
}
