import type { LoadFigures } from '../lib/http-load.js';

/** The four API routes measured, each beside the raw baseline route that does its least work. */
export const HTTP_PAIRS = ['healthz', 'cancel', 'betSlip', 'readAll'] as const;
export type HttpPairName = (typeof HTTP_PAIRS)[number];

/** One side of a pair: the medians of its runs (one per round). */
export interface RouteFigures {
  /** Method and path, e.g. `POST /raw/bare`. */
  route: string;
  /** Answers per second; null when any of its runs had an error (no figure). */
  rps: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  /**
   * CPU time (user + system) the serving process spent per answered request, in µs: read from the
   * process's own counters (/proc/<pid>/stat) around each run, the median over the runs. Unlike req/s
   * it says what a request costs rather than how long it waited for a core the machine gave elsewhere.
   */
  cpuMicros: number | null;
  /** Over all its runs. */
  errors: number;
  runs: number;
}

/**
 * A candidate's CPU per answer against the API's, read against the null band: `dearer` or `cheaper`
 * when the difference is outside the band and at least 5 %, else `within noise`; `n/a` without figures.
 */
export type CandidateVerdict = 'dearer' | 'cheaper' | 'within noise' | 'n/a';

/** Another build of the API (`--candidate NAME=DIR`), measured in the same rounds as the API and its twin. */
export interface HttpCandidateFigures {
  name: string;
  dir: string;
  /** The checkout's commit (with `+dirty` when its work tree has changes); null when not a git checkout. */
  commit: string | null;
  routes: Record<
    HttpPairName,
    {
      figures: RouteFigures;
      /** Candidate ÷ API CPU per answer: the median of the per-round ratios. */
      cpuRatio: number | null;
      verdict: CandidateVerdict;
    }
  >;
}

export interface HttpResults {
  /** API req/s ÷ its raw baseline's req/s: the median of the per-round ratios of the same run. */
  ratios: Record<HttpPairName, number | null>;
  /**
   * The bench's raw baseline req/s ÷ the independent minimal server's (bench/raw-baseline/independent.mjs)
   * on the same route in the same run (the median of the per-round ratios): within ±15 % (0.85–1.15),
   * the baseline is as fast as the raw stack.
   */
  agreement: Record<HttpPairName, number | null>;
  /** API /betSlip p99 ÷ the raw bet-slip route's p99 (the median of the per-round ratios). */
  betSlipP99Ratio: number | null;
  /** API CPU per answer ÷ the raw baseline's (the median of the per-round ratios). */
  cpuRatios: Record<HttpPairName, number | null>;
  /**
   * The null test: a second, identical API process ("twin") in the same rounds. The median of the
   * per-round |twin ÷ API − 1| of CPU per answer: the noise band, below which a CPU difference says nothing.
   */
  cpuNullBand: Record<HttpPairName, number | null>;
  pairs: Record<
    HttpPairName,
    { baseline: RouteFigures; independent: RouteFigures; api: RouteFigures; twin: RouteFigures }
  >;
  /** `--candidate` builds, in the order given; empty without one. Absent in older results. */
  candidates?: HttpCandidateFigures[];
  /** The rounds and each run's length, as run. Absent in older results. */
  rounds?: number;
  runSeconds?: number;
  /** This checkout's commit, as `commit` of a candidate. Absent in older results. */
  commit?: string | null;
  /** Every timed autocannon run, by label (`cancel.baseline.1`, `cancel.independent.1`, `cancel.api.1` …). */
  runs: Record<string, LoadFigures>;
}
