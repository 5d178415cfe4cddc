import { HTTP_PAIRS, type HttpResults, type RouteFigures } from '../figures/http.js';
import { band, count, micros, ms, table, times } from './text-table.js';

/** The HTTP phase's tables: throughput, then CPU per answer, then each candidate's. */
export function httpTables(http: HttpResults): string[] {
  const lines = [...throughputTable(http), '', ...cpuTable(http)];
  if ((http.candidates ?? []).length > 0) lines.push('', ...candidateTable(http));
  return lines;
}

/**
 * Each API route beside both raw baselines, the bench's and the independent minimal server (same
 * route, same request): req/s and latency of each, their agreement, and the API's ratio to the bench's.
 */
function throughputTable(http: HttpResults): string[] {
  const side = (figures: RouteFigures) => [
    `${count(figures.rps)}${figures.errors > 0 ? `, ${figures.errors} ERRORS` : ''}`,
    `${ms(figures.p50Ms)} / ${ms(figures.p99Ms)}`,
  ];
  return table(
    [
      'HTTP at -c 50',
      'raw route',
      'raw req/s',
      'p50 / p99',
      'independent req/s',
      'p50 / p99',
      'agreement',
      'API route',
      'API req/s',
      'p50 / p99',
      'ratio',
    ],
    HTTP_PAIRS.map((pair) => {
      const { baseline, independent, api } = http.pairs[pair];
      return [
        pair,
        baseline.route,
        ...side(baseline),
        ...side(independent),
        times(http.agreement[pair]),
        api.route,
        ...side(api),
        times(http.ratios[pair]),
      ];
    }),
  );
}

/**
 * The CPU each route costs: the API process's CPU per answered request beside the raw baseline's, and
 * the null test's band (two identical API processes in the same rounds). A difference inside the band
 * is not a result.
 */
function cpuTable(http: HttpResults): string[] {
  return table(
    ['CPU per answer', 'raw', 'API', 'API twin', 'API ÷ raw', 'null band'],
    HTTP_PAIRS.map((pair) => {
      const { baseline, api, twin } = http.pairs[pair];
      return [
        pair,
        micros(baseline.cpuMicros),
        micros(api.cpuMicros),
        micros(twin.cpuMicros),
        times(http.cpuRatios[pair]),
        band(http.cpuNullBand[pair]),
      ];
    }),
  );
}

/**
 * Each candidate build against the API, route by route: its CPU per answer, the ratio (median of the
 * per-round ratios) and whether the difference counts (outside the null band and ≥ 5 %).
 */
function candidateTable(http: HttpResults): string[] {
  const rows = (http.candidates ?? []).flatMap((candidate) =>
    HTTP_PAIRS.map((pair) => {
      const { figures, cpuRatio, verdict } = candidate.routes[pair];
      return [
        `${candidate.name} ${pair}`,
        micros(figures.cpuMicros),
        micros(http.pairs[pair].api.cpuMicros),
        times(cpuRatio),
        band(http.cpuNullBand[pair]),
        verdict,
      ];
    }),
  );
  return [
    ...table(
      ['candidate CPU per answer', 'candidate', 'API', 'candidate ÷ API', 'null band', 'outside band, ≥ 5 %'],
      rows,
    ),
    ...(http.candidates ?? []).map(
      (candidate) => `candidate ${candidate.name}: ${candidate.dir} at ${candidate.commit ?? 'no git commit'}`,
    ),
  ];
}
