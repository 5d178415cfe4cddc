import type { CandidateVerdict, RouteFigures } from '../figures/http.js';
import { type LoadFigures, type LoadTarget, runLoad } from '../lib/http-load.js';
import { medianOf, ratio } from '../lib/percentiles.js';
import { processCpuSeconds } from '../lib/process-cpu.js';
import type { BenchContext } from './context.js';

/** A process answering HTTP: its pid is where its CPU time is read. */
export interface Served {
  pid: number;
  baseUrl: string;
}

/** One process taking turns on a route: `side` names it in the figures (`api`, `twin`, a candidate's name …). */
export interface Contender {
  side: string;
  server: Served;
  target: () => LoadTarget;
}

/** One timed run and the serving process's CPU per answer in it. */
export type TimedRun = LoadFigures & { cpuMicros: number | null };

/**
 * The least difference in CPU per answer that decides anything about a candidate, besides being outside
 * the null band: below 5 % a library's way is kept whatever the band (bench/README.md, "Library bypasses").
 */
const CANDIDATE_MIN_DIFFERENCE = 0.05;

/**
 * One route's contenders take turns in short runs, `rounds` times, the order rotating each round
 * (baseline, independent, API, twin, candidates; then independent, API, …, baseline; …), and every
 * figure is a median over the rounds. This machine's speed wanders by tens of per cent within a minute
 * (other tenants of the host), in bursts: with one long run each, a burst that fell on two runs put
 * two equal servers 20–27 % apart. Short turns put each contender in every part of the minute, and the
 * median of the per-round ratios leaves out a burst that lands on one of them. Each is warmed up once
 * per route first. Returns each side's runs, in round order.
 */
export async function runRounds(
  context: BenchContext,
  pair: string,
  contenders: readonly Contender[],
  runs: Record<string, LoadFigures>,
): Promise<Map<string, TimedRun[]>> {
  const { progress, checks, settings } = context;
  const { connections, durationSeconds, warmupSeconds, rounds } = settings.http;
  for (const { side, server, target } of contenders) {
    progress.step(`HTTP: ${pair}.${side} — ${warmupSeconds} s warm-up`);
    await runLoad(server.baseUrl, target(), { connections, durationSeconds: warmupSeconds });
  }
  const bySide = new Map<string, TimedRun[]>(contenders.map(({ side }) => [side, []]));
  for (let round = 0; round < rounds; round += 1) {
    for (let turn = 0; turn < contenders.length; turn += 1) {
      const { side, server, target } = contenders[(round + turn) % contenders.length] as Contender;
      const label = `${pair}.${side}.${round + 1}`;
      progress.step(`HTTP: ${label} — ${durationSeconds} s at -c ${connections}`);
      const cpuBefore = await processCpuSeconds(server.pid);
      const figures = await runLoad(server.baseUrl, target(), { connections, durationSeconds });
      const cpuAfter = await processCpuSeconds(server.pid);
      const cpuMicros =
        cpuBefore !== null && cpuAfter !== null && figures.requests > 0
          ? Math.round(((cpuAfter - cpuBefore) / figures.requests) * 1e6)
          : null;
      runs[label] = figures;
      checks.expect(
        `http ${label}: no request errors`,
        figures.errors === 0,
        `${figures.requests} answered, ${figures.errors} errors, status codes ${JSON.stringify(figures.statusCodes)}`,
      );
      progress.step(
        `HTTP: ${label} ${figures.rps} req/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, ${cpuMicros} µs CPU/answer`,
      );
      bySide.get(side)?.push({ ...figures, cpuMicros });
    }
  }
  return bySide;
}

/** One side's medians over its runs; no req/s figure when any run had an error. */
export function summarize(route: string, runs: readonly TimedRun[]): RouteFigures {
  const errors = runs.reduce((sum, run) => sum + run.errors, 0);
  const known = (values: ReadonlyArray<number | null>) => values.filter((value): value is number => value !== null);
  return {
    route,
    rps: errors === 0 ? medianOf(known(runs.map((run) => run.rps)), 0) : null,
    p50Ms: medianOf(known(runs.map((run) => run.p50Ms)), 2),
    p99Ms: medianOf(known(runs.map((run) => run.p99Ms)), 2),
    cpuMicros: medianOf(known(runs.map((run) => run.cpuMicros)), 0),
    errors,
    runs: runs.length,
  };
}

/** The median over the rounds of `of(a's run, b's run)`, rounds where either is missing left out. */
export function medianPerRound(
  a: readonly TimedRun[],
  b: readonly TimedRun[],
  of: (a: TimedRun, b: TimedRun) => number | null,
  digits: number,
): number | null {
  const values = a.flatMap((run, round) => {
    const other = b[round];
    const value = other ? of(run, other) : null;
    return value === null ? [] : [value];
  });
  return medianOf(values, digits);
}

/** CPU per answer, a ÷ b, in one round. */
export const cpuRatio = (digits: number) => (a: TimedRun, b: TimedRun) => ratio(a.cpuMicros, b.cpuMicros, digits);

/** The null test's spread in one round: |twin ÷ API − 1| of CPU per answer. */
export function twinSpread(twin: TimedRun, api: TimedRun): number | null {
  const twinToApi = ratio(twin.cpuMicros, api.cpuMicros, 4);
  return twinToApi === null ? null : Math.abs(twinToApi - 1);
}

/** Candidate ÷ API against the band: a difference counts only outside the band and at 5 % or more. */
export function candidateVerdict(candidateToApi: number | null, band: number | null): CandidateVerdict {
  if (candidateToApi === null || band === null) return 'n/a';
  const difference = candidateToApi - 1;
  if (Math.abs(difference) <= band || Math.abs(difference) < CANDIDATE_MIN_DIFFERENCE) return 'within noise';
  return difference > 0 ? 'dearer' : 'cheaper';
}
