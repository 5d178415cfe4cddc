import type { TracingRouteFigures } from '../figures/tracing.js';
import { CANCEL_PATH, READ_ALL_PATH } from '../lib/api-paths.js';
import { type LoadFigures, type LoadTarget, runLoad } from '../lib/http-load.js';
import { signedBody } from '../lib/merchant-client.js';
import { startOtlpSink } from '../lib/otlp-sink.js';
import { medianOf, percentile, ratio, round } from '../lib/percentiles.js';
import { processCpuSeconds } from '../lib/process-cpu.js';
import type { PhaseKit } from './phase-kit.js';
import { type Phase, phase } from './runner.js';

/** The sampling the overhead is judged at (docs/operations.md, "Tracing"). */
const TRACING_SAMPLE_RATIO = 0.1;

const ROUTES = ['cancel', 'readAll'] as const;

function middleHalf(values: readonly number[]): { low: number; high: number } | null {
  const low = percentile(values, 25);
  const high = percentile(values, 75);
  return low === null || high === null ? null : { low: round(low, 2), high: round(high, 2) };
}

/**
 * The cost of tracing on the API (docs/design.md §21): signed cancel and readAll throughput with the
 * SDK on at 10 % sampling (parent-based ratio, OTLP over HTTP to a sink that answers at once) ÷ the
 * same with no endpoint set (no SDK at all). Two API processes run side by side, one of each; per route
 * they take turns in short runs, `settings.tracing.rounds` times, the order swapping each round, and every
 * figure is a median over the rounds (the ratio the median of the per-round ratios): one long run each
 * had moved the ratio by ±0.1 between back-to-back runs of the bench on this machine (2026-11-25). Many
 * short rounds rather than a few long ones: one round moves by ±15 % on its own (2026-11-27), so the
 * median needs many of them, and the quartiles of the rounds are reported beside it.
 */
export function tracingPhase({ context, measured, main, startApi }: PhaseKit): Phase {
  return phase('tracing', 'tracing overhead', async () => {
    const { settings, progress, checks, services, environment } = context;
    const merchant = main();
    const sink = await startOtlpSink();
    const tracingEnv = {
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: String(TRACING_SAMPLE_RATIO),
      OTEL_BSP_SCHEDULE_DELAY: '1000',
    };
    const signedJson = (fields: Record<string, unknown>) => JSON.stringify(signedBody(merchant, fields));
    const targets: Record<(typeof ROUTES)[number], (side: string) => LoadTarget> = {
      cancel: (side) => {
        const head = signedJson({}).slice(0, -1);
        let sequence = 0;
        return {
          method: 'POST',
          path: CANCEL_PATH,
          nextBody: () => `${head},"externalId":"trace-${side}-${sequence++}"}`,
        };
      },
      readAll: () => ({ method: 'POST', path: READ_ALL_PATH, body: signedJson({}) }),
    };
    const { connections } = settings.http;
    const { warmupSeconds, rounds, durationSeconds } = settings.tracing;
    const runs: Record<string, LoadFigures> = {};
    const apis = {
      off: await startApi('api-tracing-off'),
      on: await services.start('api', 'api-tracing-on', environment, tracingEnv),
    };
    const measure = async (route: (typeof ROUTES)[number], side: 'off' | 'on', label: string) => {
      const api = apis[side];
      const cpuBefore = await processCpuSeconds(api.pid);
      const figures = await runLoad(api.baseUrl, targets[route](label), { connections, durationSeconds });
      const cpuAfter = await processCpuSeconds(api.pid);
      runs[label] = figures;
      checks.expect(`tracing ${label}: no request errors`, figures.errors === 0, `${figures.errors} errors`);
      const cpuMicros =
        cpuBefore !== null && cpuAfter !== null && figures.requests > 0
          ? Math.round(((cpuAfter - cpuBefore) / figures.requests) * 1e6)
          : null;
      progress.step(`tracing: ${label} ${figures.rps} req/s, p99 ${figures.p99Ms} ms, ${cpuMicros} µs CPU/request`);
      return { rps: figures.errors === 0 ? figures.rps : null, cpuMicros };
    };
    const figures = {} as Record<(typeof ROUTES)[number], TracingRouteFigures>;
    try {
      for (const route of ROUTES) {
        for (const side of ['off', 'on'] as const) {
          progress.step(`tracing: ${route}.${side} — ${warmupSeconds} s warm-up`);
          await runLoad(apis[side].baseUrl, targets[route](`${side}-warm`), {
            connections,
            durationSeconds: warmupSeconds,
          });
        }
        const off: Array<{ rps: number | null; cpuMicros: number | null }> = [];
        const on: typeof off = [];
        for (let round = 0; round < rounds; round += 1) {
          progress.step(
            `tracing: ${route}, round ${round + 1} of ${rounds} — ${durationSeconds} s each at -c ${connections}`,
          );
          const order = round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
          for (const side of order) {
            (side === 'off' ? off : on).push(await measure(route, side, `${route}.${side}.${round + 1}`));
          }
        }
        const known = (values: Array<number | null>) => values.filter((value): value is number => value !== null);
        const anyError = [...off, ...on].some((run) => run.rps === null);
        const perRound = known(off.map((run, round) => ratio(on[round]?.rps ?? null, run.rps, 3)));
        const offCpuMicros = medianOf(known(off.map((run) => run.cpuMicros)), 0);
        const onCpuMicros = medianOf(known(on.map((run) => run.cpuMicros)), 0);
        figures[route] = {
          offRps: anyError ? null : medianOf(known(off.map((run) => run.rps)), 0),
          onRps: anyError ? null : medianOf(known(on.map((run) => run.rps)), 0),
          ratio: anyError ? null : medianOf(perRound, 2),
          ratioMiddleHalf: anyError ? null : middleHalf(perRound),
          offCpuMicros,
          onCpuMicros,
          cpuRatio: ratio(offCpuMicros, onCpuMicros, 2),
        };
      }
    } finally {
      await Promise.all([apis.off.stop(), apis.on.stop()]);
      await sink.close();
    }
    const { requests, bytes } = sink.exports();
    checks.expect('tracing on: spans reached the OTLP sink', requests > 0, `${requests} exports, ${bytes} bytes`);
    measured.tracing = {
      sampleRatio: TRACING_SAMPLE_RATIO,
      cancel: figures.cancel,
      readAll: figures.readAll,
      exports: requests,
      exportedBytes: bytes,
      runs,
    };
  });
}
