import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/shared/telemetry/metrics.js';

// The Grafana dashboard that the monitoring profile provisions: Grafana lays out only panels with
// a numeric grid position, and a query over a metric the gateway does not export shows "No data".

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: Record<string, unknown>;
  targets?: Array<{ expr: string }>;
}

const dashboard = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../deploy/grafana/rewards-gateway-dashboard.json', import.meta.url)), 'utf8'),
) as { uid: string; panels: Panel[] };

describe('deploy/grafana/rewards-gateway-dashboard.json', () => {
  it('places every panel on the 24-column grid, with unique ids', () => {
    for (const panel of dashboard.panels) {
      const { h, w, x, y } = panel.gridPos;
      for (const value of [h, w, x, y]) expect(value, panel.title).toEqual(expect.any(Number));
      expect((x as number) + (w as number), panel.title).toBeLessThanOrEqual(24);
    }
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('queries only metrics the gateway exports', async () => {
    const exported = new Set(
      (await new Metrics({ collectDefaults: false, processName: 'test' }).registry.getMetricsAsJSON()).map(
        (metric) => metric.name,
      ),
    );
    const exprs = dashboard.panels.flatMap((panel) => panel.targets?.map((target) => target.expr) ?? []);
    expect(exprs.length).toBeGreaterThan(10);
    for (const expr of exprs) {
      for (const [name] of expr.matchAll(/\bgateway_[a-z_]+/g)) {
        expect(exported, expr).toContain(name.replace(/_(count|sum|bucket)$/, ''));
      }
    }
  });

  it('shows the webhooks queue, the pending deliveries by merchant, and links a slow job to its traces', () => {
    const exprs = dashboard.panels.flatMap((panel) => panel.targets?.map((target) => target.expr) ?? []);
    expect(exprs).toContain(
      'max by (state) (gateway_queue_jobs{queue="webhooks", state=~"waiting|active|delayed|failed"})',
    );
    expect(exprs).toContain('max by (merchant) (gateway_webhook_pending)');
    const duration = dashboard.panels.find((panel) => panel.title === 'Job duration p95 by operation') as Panel & {
      fieldConfig: { defaults: { links?: Array<{ url: string }> } };
    };
    const [link] = duration.fieldConfig.defaults.links ?? [];
    expect(link?.url).toMatch(/^\$\{jaeger_url\}\/search\?service=rewards-gateway-worker&/);
    expect(link?.url).toMatch(/minDuration=\$\{__value\.raw\}s/);
  });
});
