import type { LoadFigures } from '../lib/http-load.js';

/** One route with tracing off and on, each a median over the rounds. */
export interface TracingRouteFigures {
  offRps: number | null;
  onRps: number | null;
  /** Tracing on ÷ tracing off, the median of the per-round ratios; null when a run had an error. */
  ratio: number | null;
  /**
   * The per-round ratios' first and third quartiles: how far one round moves on the machine of the run
   * (two identical APIs read 0.76–1.35× in single rounds on 2026-11-27). Absent in older results.
   */
  ratioMiddleHalf?: { low: number; high: number } | null;
  /** The API process's CPU time per answered request (µs), off and on (medians over the rounds). */
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
