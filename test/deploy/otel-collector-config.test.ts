import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// The collector's binary cannot run here (it is not packaged for this machine), so its config is
// checked the way the collector would refuse it at start: every component a pipeline names must be
// defined, every defined extension enabled, and the compose file must mount this config and send
// the services' spans to the collector's OTLP/HTTP port.

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');

interface CollectorConfig {
  receivers: Record<string, unknown>;
  processors?: Record<string, unknown>;
  exporters: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  service: {
    extensions?: string[];
    pipelines: Record<string, { receivers: string[]; processors?: string[]; exporters: string[] }>;
  };
}

const config = parse(read('deploy/otel-collector/config.yaml')) as CollectorConfig;
// `<<: *app-env` merges: YAML 1.1's merge key, which compose applies.
const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<
    string,
    { image?: string; volumes?: string[]; environment?: Record<string, string>; profiles?: string[] }
  >;
  'x-app': { environment: Record<string, string> };
};

describe('deploy/otel-collector/config.yaml', () => {
  it('has a traces pipeline from the OTLP receiver (HTTP on 4318) to Jaeger', () => {
    const traces = config.service.pipelines.traces;
    expect(traces?.receivers).toEqual(['otlp']);
    expect(traces?.exporters).toContain('otlp/jaeger');
    expect(JSON.stringify(config.receivers.otlp)).toContain('0.0.0.0:4318');
    expect(JSON.stringify(config.exporters['otlp/jaeger'])).toContain('jaeger:4317');
  });

  it('names in its pipelines only components it defines, and uses every one it defines', () => {
    const used = { receivers: new Set<string>(), processors: new Set<string>(), exporters: new Set<string>() };
    for (const [name, pipeline] of Object.entries(config.service.pipelines)) {
      expect(pipeline.receivers.length, name).toBeGreaterThan(0);
      expect(pipeline.exporters.length, name).toBeGreaterThan(0);
      for (const kind of ['receivers', 'processors', 'exporters'] as const) {
        for (const component of pipeline[kind] ?? []) {
          expect(Object.keys(config[kind] ?? {}), `${name} ${kind}`).toContain(component);
          used[kind].add(component);
        }
      }
    }
    for (const kind of ['receivers', 'processors', 'exporters'] as const) {
      expect([...used[kind]].sort()).toEqual(Object.keys(config[kind] ?? {}).sort());
    }
    expect((config.service.extensions ?? []).sort()).toEqual(Object.keys(config.extensions ?? {}).sort());
  });
});

describe('docker-compose.yml monitoring profile', () => {
  it('runs the collector with this config, and Jaeger', () => {
    const collector = compose.services['otel-collector'];
    expect(collector?.profiles).toEqual(['monitoring']);
    expect(collector?.volumes).toContain('./deploy/otel-collector/config.yaml:/etc/otelcol/config.yaml:ro');
    expect(compose.services.jaeger?.profiles).toEqual(['monitoring']);
  });

  it('passes the standard OTEL_* variables to the services, tracing off unless an endpoint is set', () => {
    const env = compose['x-app'].environment;
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toMatch(/^\$\{OTEL_EXPORTER_OTLP_ENDPOINT:-\}$/);
    expect(env.OTEL_TRACES_SAMPLER).toBeDefined();
    for (const service of ['api', 'worker']) {
      expect(compose.services[service]?.environment?.OTEL_EXPORTER_OTLP_ENDPOINT, service).toBeDefined();
    }
  });
});
