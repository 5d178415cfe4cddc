import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SpanKind } from '@opentelemetry/api';
import { AlwaysOnSampler, InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadTelemetrySettings } from '../../src/shared/config/config.js';
import { RedactingSpanExporter, redactAttributes } from '../../src/shared/telemetry/span-redaction.js';
import { TELEMETRY_PRELOAD } from '../helpers/processes.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('tracing settings (the standard OTEL_* variables)', () => {
  it('is off with no endpoint, and with OTEL_SDK_DISABLED=true whatever the endpoint', () => {
    expect(loadTelemetrySettings({}).tracesUrl).toBeNull();
    expect(loadTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).tracesUrl).toBeNull();
    expect(
      loadTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' })
        .tracesUrl,
    ).toBeNull();
  });

  it('appends /v1/traces to the general endpoint, uses a traces endpoint as it is', () => {
    expect(loadTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracesUrl).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(
      loadTelemetrySettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom',
      }).tracesUrl,
    ).toBe('http://traces:9999/custom');
  });

  it('reads the protocol, sampler and ratio, with the standard defaults', () => {
    expect(loadTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toMatchObject({
      protocol: 'http/protobuf',
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      exportDelayMs: 5_000,
      exportQueueSize: 2_048,
      exportBatchSize: 512,
      exportTimeoutMs: 30_000,
    });
    expect(
      loadTelemetrySettings({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
      }),
    ).toMatchObject({ protocol: 'http/json', sampler: 'parentbased_traceidratio', samplerRatio: 0.1 });
  });

  it('reads the batch span processor settings, and refuses a batch larger than the queue', () => {
    expect(
      loadTelemetrySettings({
        OTEL_BSP_SCHEDULE_DELAY: '1000',
        OTEL_BSP_MAX_QUEUE_SIZE: '8192',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1024',
        OTEL_BSP_EXPORT_TIMEOUT: '10000',
      }),
    ).toMatchObject({ exportDelayMs: 1_000, exportQueueSize: 8_192, exportBatchSize: 1_024, exportTimeoutMs: 10_000 });
    expect(() =>
      loadTelemetrySettings({ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '512' }),
    ).toThrow(/OTEL_BSP_MAX_EXPORT_BATCH_SIZE/);
    expect(() => loadTelemetrySettings({ OTEL_BSP_MAX_QUEUE_SIZE: '0' })).toThrow(/OTEL_BSP_MAX_QUEUE_SIZE/);
  });

  it('refuses grpc, an unknown sampler and a ratio out of range, naming the variable', () => {
    expect(() => loadTelemetrySettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
    expect(() => loadTelemetrySettings({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(ConfigError);
    expect(() => loadTelemetrySettings({ OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
  });
});

describe('span attributes leave without secrets', () => {
  it('drops secret, token, signature, hash and player values, and URL queries; keeps ids and counts', () => {
    const kept = redactAttributes({
      'url.full': 'http://gateway/betSlip?merchantId=m&hash=abc&authToken=t0k3n',
      'http.target': '/betSlip?hash=abc',
      'url.query': 'hash=abc&authToken=t0k3n',
      'http.request.header.x-signature': 't=1,v2=abc',
      'app.secretKey': 's3cr3t',
      authToken: 't0k3n',
      'rewards.playerIds': 'p-1,p-2',
      'db.query.parameter.0': 'p-1',
      'db.statement': `SELECT 1 ${'x'.repeat(5_000)}`,
      'job.id': 'job-1',
      'merchant.id': 'merchant-1',
      'job.result.players': 30,
    });
    expect(kept).toEqual({
      'url.full': 'http://gateway/betSlip',
      'http.target': '/betSlip',
      'db.statement': `SELECT 1 ${'x'.repeat(991)}`,
      'job.id': 'job-1',
      'merchant.id': 'merchant-1',
      'job.result.players': 30,
    });
  });
});

describe('the exporter in front of OTLP', () => {
  it('exports a plain copy of each span: every field of the span, its attributes redacted, its name without a query', async () => {
    const exported = new InMemorySpanExporter();
    const ended = new InMemorySpanExporter();
    const provider = new TracerProvider({
      sampler: new AlwaysOnSampler(),
      spanProcessors: [
        new SimpleSpanProcessor({ exporter: new RedactingSpanExporter(exported) }),
        new SimpleSpanProcessor({ exporter: ended }),
      ],
    });
    const span = provider.getTracer('test').startSpan('GET /betSlip?hash=abc', { kind: SpanKind.SERVER });
    span.setAttributes({ 'url.full': 'http://gateway/betSlip?authToken=t0k3n', 'job.id': 'job-1', authToken: 't0k3n' });
    span.addEvent('checked', { 'app.secretKey': 's3cr3t', 'job.result.players': 3 });
    span.end();
    await provider.forceFlush();

    const [original] = ended.getFinishedSpans();
    const [copy] = exported.getFinishedSpans();
    if (!original || !copy) throw new Error('no span exported');
    // Not an object whose prototype is the live span (that cost V8 a map per span: span-redaction.ts).
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(copy.name).toBe('GET /betSlip');
    expect(copy.attributes).toEqual({ 'url.full': 'http://gateway/betSlip', 'job.id': 'job-1' });
    expect(copy.events.map((event) => event.attributes)).toEqual([{ 'job.result.players': 3 }]);
    expect(copy.spanContext()).toEqual(original.spanContext());
    for (const field of [
      'kind',
      'parentSpanContext',
      'startTime',
      'endTime',
      'status',
      'links',
      'duration',
      'ended',
      'resource',
      'instrumentationScope',
      'droppedAttributesCount',
      'droppedEventsCount',
      'droppedLinksCount',
    ] as const) {
      expect(copy[field], field).toEqual(original[field]);
    }
    await provider.shutdown();
  });
});

/** What the script run after the preload prints: the tracer provider, whether pg is patched, the context manager. */
const PROBE = `
  const { context, ROOT_CONTEXT, createContextKey, trace } = await import('@opentelemetry/api');
  const pg = (await import('pg')).default;
  const provider = trace.getTracerProvider().getDelegate();
  // An instrumentation marks what it wraps with __wrapped.
  const patched = Boolean(pg.Client.prototype.query.__wrapped);
  // Does the active context outlive an await (AsyncLocalStorage) or not (no context manager registered)?
  const key = createContextKey('probe');
  const survives = await context.with(ROOT_CONTEXT.setValue(key, 1), async () => {
    await Promise.resolve();
    return context.active().getValue(key) === 1;
  });
  console.log(provider.constructor.name.split('$')[0], patched ? 'instrumented' : 'untouched', survives ? 'async' : 'call-stack');
`;

/** Runs PROBE after the preload, as the services run (as `-e`, or as the file `entry`), and returns what it printed. */
function afterPreload(env: Record<string, string>, entry?: string): string {
  const target = entry === undefined ? ['--input-type=module', '-e', PROBE] : [entry];
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--import', TELEMETRY_PRELOAD, ...target], {
    cwd: root,
    env: { PATH: process.env.PATH, NODE_ENV: 'test', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect(run.stderr).toBe('');
  return run.stdout.trim();
}

describe('the preload', () => {
  it('with no endpoint starts no SDK and creates no exporter (the API no-op provider stays)', () => {
    // No context manager either: the API's default one keeps nothing, across an await or not.
    expect(afterPreload({})).toBe('NoopTracerProvider untouched call-stack');
    expect(afterPreload({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_SDK_DISABLED: 'true' })).toBe(
      'NoopTracerProvider untouched call-stack',
    );
  });

  it('with an endpoint starts the SDK, and the instrumentations patch what the service imports', () => {
    expect(afterPreload({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' })).toBe(
      'TracerProvider instrumented async',
    );
  });

  it('in the API process: the SDK with no instrumentation, and a context that follows awaits', () => {
    // The preload tells the API by its entry point (…/api/index.js): a file of that name runs the probe.
    const directory = mkdtempSync(join(root, 'test', '.preload-probe-'));
    try {
      const entry = join(directory, 'api', 'index.js');
      mkdirSync(dirname(entry));
      writeFileSync(entry, PROBE);
      expect(afterPreload({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' }, entry)).toBe(
        'TracerProvider untouched async',
      );
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
