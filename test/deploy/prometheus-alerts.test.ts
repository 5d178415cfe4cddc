import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/shared/telemetry/metrics.js';

// The Prometheus files of deploy/: the configuration docker compose's monitoring profile runs, the
// alert rules and their unit tests, all checked by promtool (Debian package `prometheus`, installed
// by .ci/run), and the metric names the alerts read checked against the ones the gateway exports.

const dir = fileURLToPath(new URL('../../deploy/prometheus/', import.meta.url));
const alerts = readFileSync(`${dir}alerts.yml`, 'utf8');
const alertTests = readFileSync(`${dir}alerts.test.yml`, 'utf8');

function promtool(...args: string[]): string {
  try {
    execFileSync('which', ['promtool'], { stdio: 'ignore' });
  } catch {
    throw new Error('promtool is not on PATH. Install it: apt-get install -y prometheus');
  }
  const run = spawnSync('promtool', args, { cwd: dir, encoding: 'utf8' });
  const output = `${run.stdout}${run.stderr}`;
  if (run.status !== 0) throw new Error(`promtool ${args.join(' ')} failed:\n${output}`);
  return output;
}

describe('deploy/prometheus', () => {
  it('prometheus.yml is a valid configuration, with its rule file', () => {
    expect(promtool('check', 'config', 'prometheus.yml')).toMatch(/SUCCESS: \d+ rules found/);
  });

  it("the alerts pass their unit tests (promtool's rule tests)", () => {
    expect(promtool('test', 'rules', 'alerts.test.yml')).toContain('SUCCESS');
  });

  it('every alert has a test where it fires and one where it does not', () => {
    const names = [...alerts.matchAll(/^\s*- alert: (\S+)$/gm)].map((match) => match[1] as string);
    expect(names.length).toBeGreaterThanOrEqual(6);
    // Each `- eval_time:` entry names one alert and expects either no alert (`exp_alerts: []`) or some.
    const checks = alertTests
      .split(/^\s*- eval_time:/m)
      .slice(1)
      .map((entry) => ({
        alert: entry.match(/alertname: (\S+)/)?.[1],
        fires: !/exp_alerts: \[\]/.test(entry),
      }));
    for (const name of names) {
      expect(checks, `${name} firing`).toContainEqual({ alert: name, fires: true });
      expect(checks, `${name} quiet`).toContainEqual({ alert: name, fires: false });
    }
  });

  it("the alerts read only metrics the gateway exports (or redis_exporter's)", async () => {
    const exported = new Set(
      (await new Metrics({ collectDefaults: false, processName: 'test' }).registry.getMetricsAsJSON()).map(
        (metric) => metric.name,
      ),
    );
    const used = new Set(
      [...alerts.matchAll(/\b(gateway_[a-z_]+)/g)].map((match) =>
        (match[1] as string).replace(/_(count|sum|bucket)$/, ''),
      ),
    );
    expect(used.size).toBeGreaterThanOrEqual(4);
    for (const name of used) expect(exported, name).toContain(name);
  });
});
