import { type LoadFigures, type LoadTarget, runLoad } from '../lib/http-load.js';
import { signedBody } from '../lib/merchant-client.js';
import { startOtlpSink } from '../lib/otlp-sink.js';
import { ratio } from '../lib/percentiles.js';
import { processCpuSeconds } from '../lib/process-cpu.js';
import { READ_ALL_PATH } from '../lib/read-all-stream.js';
import type { PhaseKit } from './phase-kit.js';
import { type Phase, phase } from './runner.js';
import { CANCEL_PATH } from './single-cancels.phase.js';

/** The sampling the overhead is judged at (docs/operations.md, "Tracing"). */
const TRACING_SAMPLE_RATIO = 0.1;

/** One route with tracing off, on, and off again (the off figure is the mean of its two runs). */
interface TracingRouteFigures {
  offRps: number | null;
  onRps: number | null;
  /** Tracing on ÷ tracing off; null when a run had an error. */
  ratio: number | null;
  /** The API process's CPU time per answered request (µs), off (mean of two runs) and on. */
  offCpuMicros: number | null;
  onCpuMicros: number | null;
  /** Off ÷ on CPU per request: the throughput share tracing leaves where the API is CPU-bound. */
  cpuRatio: number | null;
}

export interface TracingResults {
  sampleRatio: number;
  cancel: TracingRouteFigures;
  readAll: TracingRouteFigures;
  /** OTLP exports the sink received while tracing was on (0 would mean nothing was traced). */
  exports: number;
  exportedBytes: number;
  runs: Record<string, LoadFigures>;
}

const ROUTES = ['cancel', 'readAll'] as const;

/**
 * The cost of tracing on the API (docs/design.md §21): signed cancel and readAll throughput with the
 * SDK on at 10 % sampling (parent-based ratio, OTLP over HTTP to a sink that answers at once) ÷ the
 * same with no endpoint set (no SDK at all). Off, on, off again, each route on a fresh API process,
 * so that a drift of the machine hits both sides alike.
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
    const { connections, warmupSeconds } = settings.http;
    const { durationSeconds } = settings.tracing;
    const runs: Record<string, LoadFigures> = {};
    const measure = async (route: (typeof ROUTES)[number], side: 'off' | 'on' | 'offAgain') => {
      const label = `${route}.${side}`;
      const api =
        side === 'on'
          ? await services.start('api', `api-tracing-${label}`, environment, tracingEnv)
          : await startApi(`api-tracing-${label}`);
      try {
        progress.step(`tracing: ${label} — ${warmupSeconds} s warm-up, then ${durationSeconds} s at -c ${connections}`);
        await runLoad(api.baseUrl, targets[route](`${side}-warm`), { connections, durationSeconds: warmupSeconds });
        const cpuBefore = await processCpuSeconds(api.pid);
        const figures = await runLoad(api.baseUrl, targets[route](side), { connections, durationSeconds });
        const cpuAfter = await processCpuSeconds(api.pid);
        runs[label] = figures;
        checks.expect(`tracing ${label}: no request errors`, figures.errors === 0, `${figures.errors} errors`);
        const cpuMicros =
          cpuBefore !== null && cpuAfter !== null && figures.requests > 0
            ? Math.round(((cpuAfter - cpuBefore) / figures.requests) * 1e6)
            : null;
        progress.step(`tracing: ${label} ${figures.rps} req/s, p99 ${figures.p99Ms} ms, ${cpuMicros} µs CPU/request`);
        return figures.errors === 0 ? { rps: figures.rps, cpuMicros } : null;
      } finally {
        await api.stop();
      }
    };
    const figures = {} as Record<(typeof ROUTES)[number], TracingRouteFigures>;
    try {
      for (const route of ROUTES) {
        const off = await measure(route, 'off');
        const on = await measure(route, 'on');
        const offAgain = await measure(route, 'offAgain');
        const mean = (a: number | null | undefined, b: number | null | undefined) =>
          a != null && b != null ? Math.round((a + b) / 2) : null;
        const offRps = mean(off?.rps, offAgain?.rps);
        const offCpuMicros = mean(off?.cpuMicros, offAgain?.cpuMicros);
        const onCpuMicros = on?.cpuMicros ?? null;
        figures[route] = {
          offRps,
          onRps: on?.rps ?? null,
          ratio: ratio(on?.rps, offRps, 2),
          offCpuMicros,
          onCpuMicros,
          cpuRatio: ratio(offCpuMicros, onCpuMicros, 2),
        };
      }
    } finally {
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
