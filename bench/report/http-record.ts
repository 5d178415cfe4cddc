import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HTTP_PAIRS, type HttpResults } from '../figures/http.js';
import type { MachineInfo } from '../lib/machine.js';

/**
 * One HTTP run as data, a file of its own in bench/results/ named by its UTC minute
 * (`2026-11-28T15-04Z-http.json`): per route and process the median CPU µs per answer and req/s, the
 * null band, and each candidate's ratio to the API and verdict. The record a bypass decision cites.
 */
export interface HttpRecord {
  at: string;
  machine: Omit<MachineInfo, 'node'>;
  node: string;
  /** This checkout's commit (`+dirty` with uncommitted changes). */
  commit: string | null;
  settings: { rounds: number | null; runSeconds: number | null; connections: number; quick: boolean };
  serviceEnv: Record<string, string>;
  routes: Record<
    string,
    {
      /** Median CPU µs per answer, by process: baseline, independent, api, twin, then each candidate's name. */
      cpuMicros: Record<string, number | null>;
      /** Median answers per second, by process, as cpuMicros. */
      rps: Record<string, number | null>;
      /** The null test: median |twin ÷ API − 1| of CPU per answer. */
      band: number | null;
    }
  >;
  candidates: Array<{
    name: string;
    dir: string;
    commit: string | null;
    /** Per route: candidate ÷ API CPU per answer (median of the per-round ratios) and its verdict. */
    routes: Record<string, { cpuRatio: number | null; verdict: string }>;
  }>;
  /** Names of the correctness checks that failed (the figures of such a run are suspect). */
  failedChecks: string[];
}

export function httpRecord(
  http: HttpResults,
  run: { at: string; machine: MachineInfo; quick: boolean; serviceEnv: Record<string, string>; connections: number },
  failedChecks: string[],
): HttpRecord {
  const { node, ...machine } = run.machine;
  const candidates = http.candidates ?? [];
  return {
    at: run.at,
    machine,
    node,
    commit: http.commit ?? null,
    settings: {
      rounds: http.rounds ?? null,
      runSeconds: http.runSeconds ?? null,
      connections: run.connections,
      quick: run.quick,
    },
    serviceEnv: run.serviceEnv,
    routes: Object.fromEntries(
      HTTP_PAIRS.map((pair) => {
        const sides = http.pairs[pair];
        const processes = [
          ['baseline', sides.baseline],
          ['independent', sides.independent],
          ['api', sides.api],
          ['twin', sides.twin],
          ...candidates.map((candidate) => [candidate.name, candidate.routes[pair].figures] as const),
        ] as const;
        return [
          pair,
          {
            cpuMicros: Object.fromEntries(processes.map(([name, figures]) => [name, figures.cpuMicros])),
            rps: Object.fromEntries(processes.map(([name, figures]) => [name, figures.rps])),
            band: http.cpuNullBand[pair],
          },
        ];
      }),
    ),
    candidates: candidates.map(({ name, dir, commit, routes }) => ({
      name,
      dir,
      commit,
      routes: Object.fromEntries(
        HTTP_PAIRS.map((pair) => [pair, { cpuRatio: routes[pair].cpuRatio, verdict: routes[pair].verdict }]),
      ),
    })),
    failedChecks,
  };
}

/** Writes the record as `<UTC minute>-http.json` in `dir` (with seconds when that name is taken); returns its path. */
export function writeHttpRecord(dir: string, record: HttpRecord): string {
  mkdirSync(dir, { recursive: true });
  const stamp = record.at.replace(/:/g, '-');
  let path = join(dir, `${stamp.slice(0, 16)}Z-http.json`);
  if (existsSync(path)) path = join(dir, `${stamp.slice(0, 19)}Z-http.json`);
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`);
  return path;
}
