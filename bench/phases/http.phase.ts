import { fileURLToPath } from 'node:url';
import { HTTP_PAIRS, type HttpCandidateFigures, type HttpPairName, type HttpResults } from '../figures/http.js';
import { gitCommit } from '../lib/git-commit.js';
import type { LoadFigures } from '../lib/http-load.js';
import { ratio } from '../lib/percentiles.js';
import type { SeededMerchant } from '../lib/seed.js';
import { INDEPENDENT_BASELINE_QUEUE, RAW_BASELINE_QUEUE } from '../raw-baseline/paths.js';
import { checkApiResponses, checkCandidateResponses, checkRawResponses } from './http-checks.js';
import {
  type Contender,
  candidateVerdict,
  cpuRatio,
  medianPerRound,
  runRounds,
  type Served,
  summarize,
  type TimedRun,
  twinSpread,
} from './http-rounds.js';
import { describeTarget, httpTargets } from './http-targets.js';
import type { PhaseKit } from './phase-kit.js';
import { type Phase, phase } from './runner.js';

/**
 * The HTTP pairs: one API process, its identical twin (the null test) and one process per
 * `--candidate` build, no worker.
 */
export function httpPhase(kit: PhaseKit): Phase {
  const { context, measured, main, startApi } = kit;
  return phase('http', 'HTTP', async () => {
    const api = await startApi('api-http');
    const twin = await startApi('api-http-twin');
    const candidates: CandidateProcess[] = [];
    for (const { name, dir } of context.settings.candidates) {
      const server = await context.services.start('api', `api-http-candidate-${name}`, context.environment, {}, dir);
      candidates.push({ name, dir, server });
    }
    measured.http = await measureHttp(kit, { api, twin, candidates }, main());
  });
}

interface CandidateProcess {
  name: string;
  dir: string;
  server: Served;
}

/**
 * autocannon (-c 50) against four routes of each API process (no worker running: a cancel is measured
 * as accepted, the job stored in Redis), each beside its floor on the bench's raw baseline server
 * (bench/raw-baseline/), a separate process on the same database and Redis. The figures that count are
 * ratios within the same rounds; a run with any error is no figure.
 */
async function measureHttp(
  { context }: PhaseKit,
  apis: { api: Served; twin: Served; candidates: readonly CandidateProcess[] },
  merchant: SeededMerchant,
): Promise<HttpResults> {
  const { settings, services, environment } = context;
  const token = merchant.sessionTokens[0];
  if (!token) throw new Error('the seed returned no session token');
  const apiAnswers = await checkApiResponses(context, 'api', apis.api.baseUrl, merchant, token);
  for (const { name, server } of apis.candidates) {
    await checkCandidateResponses(context, name, server.baseUrl, merchant, token, apiAnswers);
  }
  const rawSettings = { merchant, readAllBody: apiAnswers.readAll, betSlip: { token, body: apiAnswers.betSlip } };
  const raw = await services.startRawBaseline('raw-baseline-http', environment, rawSettings, 'bench');
  await checkRawResponses(context, 'raw', RAW_BASELINE_QUEUE, raw.baseUrl, merchant, token, apiAnswers);
  const independent = await services.startRawBaseline(
    'independent-baseline-http',
    environment,
    rawSettings,
    'independent',
  );
  await checkRawResponses(
    context,
    'independent',
    INDEPENDENT_BASELINE_QUEUE,
    independent.baseUrl,
    merchant,
    token,
    apiAnswers,
  );

  // The twin and the candidates take their turns in the same rounds as the API: how far two identical
  // processes differ is the noise band every CPU difference is read against.
  const targets = httpTargets(merchant, token);
  const runs: Record<string, LoadFigures> = {};
  const pairs = {} as HttpResults['pairs'];
  const summaries = {} as Record<HttpPairName, PairSummary>;
  const candidateRoutes = apis.candidates.map(() => ({}) as HttpCandidateFigures['routes']);
  for (const pair of HTTP_PAIRS) {
    const { baseline, api } = targets[pair];
    const contenders: Contender[] = [
      { side: 'baseline', server: raw, target: baseline },
      { side: 'independent', server: independent, target: baseline },
      { side: 'api', server: apis.api, target: api },
      { side: 'twin', server: apis.twin, target: api },
      ...apis.candidates.map(({ name, server }) => ({ side: name, server, target: api })),
    ];
    const bySide = await runRounds(context, pair, contenders, runs);
    const of = (side: string) => bySide.get(side) ?? [];
    const baselineRoute = describeTarget(baseline());
    const apiRoute = describeTarget(api());
    pairs[pair] = {
      baseline: summarize(baselineRoute, of('baseline')),
      independent: summarize(baselineRoute, of('independent')),
      api: summarize(apiRoute, of('api')),
      twin: summarize(apiRoute, of('twin')),
    };
    // A pair with an erroring run has no throughput figure (its rps is null).
    const valid = (...sides: Array<'api' | 'baseline' | 'independent'>) =>
      sides.every((side) => pairs[pair][side].rps !== null);
    const band = medianPerRound(of('twin'), of('api'), twinSpread, 3);
    summaries[pair] = {
      ratio: valid('api', 'baseline') ? medianPerRound(of('api'), of('baseline'), rpsRatio, 2) : null,
      agreement: valid('baseline', 'independent')
        ? medianPerRound(of('baseline'), of('independent'), rpsRatio, 2)
        : null,
      p99Ratio: valid('api', 'baseline') ? medianPerRound(of('api'), of('baseline'), p99Ratio, 2) : null,
      cpuRatio: medianPerRound(of('api'), of('baseline'), cpuRatio(3), 2),
      band,
    };
    apis.candidates.forEach(({ name }, index) => {
      const candidateToApi = medianPerRound(of(name), of('api'), cpuRatio(4), 3);
      const routes = candidateRoutes[index] as HttpCandidateFigures['routes'];
      routes[pair] = {
        figures: summarize(apiRoute, of(name)),
        cpuRatio: candidateToApi,
        verdict: candidateVerdict(candidateToApi, band),
      };
    });
  }
  await Promise.all([raw.stop(), independent.stop()]);

  const perPair = (field: keyof PairSummary) =>
    Object.fromEntries(HTTP_PAIRS.map((pair) => [pair, summaries[pair][field]])) as Record<HttpPairName, number | null>;
  return {
    ratios: perPair('ratio'),
    agreement: perPair('agreement'),
    betSlipP99Ratio: summaries.betSlip.p99Ratio,
    cpuRatios: perPair('cpuRatio'),
    cpuNullBand: perPair('band'),
    pairs,
    candidates: apis.candidates.map(({ name, dir }, index) => ({
      name,
      dir,
      commit: gitCommit(dir),
      routes: candidateRoutes[index] as HttpCandidateFigures['routes'],
    })),
    rounds: settings.http.rounds,
    runSeconds: settings.http.durationSeconds,
    commit: gitCommit(ROOT),
    runs,
  };
}

/** One route's ratios, each the median of the per-round ratios. */
interface PairSummary {
  /** API ÷ raw baseline, req/s. */
  ratio: number | null;
  /** Raw baseline ÷ independent server, req/s. */
  agreement: number | null;
  /** API ÷ raw baseline, p99. */
  p99Ratio: number | null;
  /** API ÷ raw baseline, CPU per answer. */
  cpuRatio: number | null;
  /** The null test: |twin ÷ API − 1| of CPU per answer. */
  band: number | null;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const rpsRatio = (a: TimedRun, b: TimedRun) => ratio(a.rps, b.rps);
const p99Ratio = (a: TimedRun, b: TimedRun) => ratio(a.p99Ms, b.p99Ms, 2);
