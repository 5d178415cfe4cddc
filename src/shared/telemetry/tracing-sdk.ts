import { createRequire, syncBuiltinESMExports } from 'node:module';
import { context, propagation, trace } from '@opentelemetry/api';
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
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { TelemetrySettings } from '../config.js';
import { RedactingSpanExporter } from './span-redaction.js';

/**
 * The OpenTelemetry SDK, started by telemetry.preload.ts before the service's own modules load, and
 * only when an endpoint is set: this module (and the SDK it loads) is never imported otherwise.
 */

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
    sampler: samplerFor(settings),
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
