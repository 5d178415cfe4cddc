import { type LoadFigures, type LoadTarget, runLoad } from '../lib/http-load.js';
import { MerchantClient, signedBody } from '../lib/merchant-client.js';
import { medianOf, ratio } from '../lib/percentiles.js';
import { processCpuSeconds } from '../lib/process-cpu.js';
import { READ_ALL_PATH } from '../lib/read-all-stream.js';
import type { SeededMerchant } from '../lib/seed.js';
import { INDEPENDENT_BASELINE_QUEUE, RAW_BASELINE_PATHS, RAW_BASELINE_QUEUE } from '../raw-baseline/paths.js';
import type { BenchContext } from './context.js';
import type { PhaseKit } from './phase-kit.js';
import { type Phase, phase } from './runner.js';
import { CANCEL_PATH } from './single-cancels.phase.js';

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
  /** Every timed autocannon run, by label (`cancel.baseline.1`, `cancel.independent.1`, `cancel.api.1` …). */
  runs: Record<string, LoadFigures>;
}

const BET_SLIP_PATH = '/betSlip';

interface PairTargets {
  baseline: () => LoadTarget;
  api: () => LoadTarget;
}

/** The HTTP pairs: one API process and its identical twin (the null test), no worker. */
export function httpPhase({ context, measured, main, startApi }: PhaseKit): Phase {
  return phase('http', 'HTTP', async () => {
    const api = await startApi('api-http');
    const twin = await startApi('api-http-twin');
    measured.http = await measureHttp(context, { api, twin }, main());
  });
}

interface Served {
  pid: number;
  baseUrl: string;
}

/**
 * autocannon (-c 50) against four routes of one API process (no worker running: a cancel is
 * measured as accepted, the job stored in Redis), each beside its floor on the bench's raw baseline
 * server (bench/raw-baseline/), a separate process on the same database and Redis. The figure that
 * counts is the ratio API ÷ baseline of the same run; a run with any error is no figure.
 */
async function measureHttp(
  context: BenchContext,
  apis: { api: Served; twin: Served },
  merchant: SeededMerchant,
): Promise<HttpResults> {
  const { settings, progress, checks, services, environment } = context;
  const apiUrl = apis.api.baseUrl;
  const token = merchant.sessionTokens[0];
  if (!token) throw new Error('the seed returned no session token');
  const apiAnswers = await checkApiResponses(context, apiUrl, merchant, token);
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

  // One signed timestamp serves a whole run (the signature covers only merchantId + timestamp);
  // each run signs afresh, well inside the 5-minute window.
  const signedJson = (fields: Record<string, unknown>) => JSON.stringify(signedBody(merchant, fields));
  const cancelTarget = (path: string, idPrefix: string) => (): LoadTarget => {
    // Every request names a reward of its own, so none shares another's job (docs/design.md §4).
    const head = signedJson({}).slice(0, -1);
    let sequence = 0;
    return { method: 'POST', path, nextBody: () => `${head},"externalId":"${idPrefix}-${sequence++}"}` };
  };
  const betSlipTarget = (path: string) => (): LoadTarget => ({
    method: 'POST',
    path,
    body: signedJson({ authToken: token }),
    // /betSlip answers an unknown or expired token with 200 and an errorCode: not a good answer.
    verifyBody: (body) => body.includes('"errorCode":0'),
  });
  const targets: Record<HttpPairName, PairTargets> = {
    // The raw bare route gets the same small signed body as readAll, and never reads it.
    healthz: {
      baseline: () => ({ method: 'POST', path: RAW_BASELINE_PATHS.bare, body: signedJson({}) }),
      api: () => ({ method: 'GET', path: '/healthz' }),
    },
    cancel: {
      baseline: cancelTarget(RAW_BASELINE_PATHS.cancel, 'raw-http'),
      api: cancelTarget(CANCEL_PATH, 'bench-http'),
    },
    betSlip: { baseline: betSlipTarget(RAW_BASELINE_PATHS.betSlip), api: betSlipTarget(BET_SLIP_PATH) },
    readAll: {
      baseline: () => ({ method: 'POST', path: RAW_BASELINE_PATHS.readAll, body: signedJson({}) }),
      api: () => ({ method: 'POST', path: READ_ALL_PATH, body: signedJson({}) }),
    },
  };

  const { connections, durationSeconds, warmupSeconds, rounds } = settings.http;
  const runs: Record<string, LoadFigures> = {};
  const measure = async (label: string, server: Served, target: () => LoadTarget): Promise<TimedRun> => {
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
    return { ...figures, cpuMicros };
  };

  // The three servers of a route take turns in short runs, `rounds` times, the order rotating each round
  // (baseline, independent, API; then independent, API, baseline; …), and every figure is a median over
  // the rounds. This machine's speed wanders by tens of per cent within a minute (other tenants of the
  // host), in bursts, not in a straight line: with one long run each, a burst that fell on the two
  // independent runs put the baselines 20–27 % apart (full run of 2026-11-24, 22:49) though they serve
  // alike within 4 % when each has a core of its own. Short turns put each server in every part of
  // the minute, and the median of the per-round ratios (each from three runs 10-odd seconds apart)
  // leaves out a burst that lands on one of them. Each server is warmed up once per route first.
  // The API's twin takes its turns too: how far two identical processes differ in the same rounds is
  // the noise band every CPU difference is read against.
  const pairs = {} as HttpResults['pairs'];
  const roundRatios = {} as Record<
    HttpPairName,
    { api: number[]; agreement: number[]; betSlipP99: number[]; cpu: number[]; twinSpread: number[] }
  >;
  for (const pair of HTTP_PAIRS) {
    const { baseline, api } = targets[pair];
    const servers = [
      { side: 'baseline', server: raw, target: baseline },
      { side: 'independent', server: independent, target: baseline },
      { side: 'api', server: apis.api, target: api },
      { side: 'twin', server: apis.twin, target: api },
    ] as const;
    for (const { side, server, target } of servers) {
      progress.step(`HTTP: ${pair}.${side} — ${warmupSeconds} s warm-up`);
      await runLoad(server.baseUrl, target(), { connections, durationSeconds: warmupSeconds });
    }
    const bySide = {
      baseline: [] as TimedRun[],
      independent: [] as TimedRun[],
      api: [] as TimedRun[],
      twin: [] as TimedRun[],
    };
    for (let round = 0; round < rounds; round += 1) {
      for (let turn = 0; turn < servers.length; turn += 1) {
        const { side, server, target } = servers[(round + turn) % servers.length] as (typeof servers)[number];
        bySide[side].push(await measure(`${pair}.${side}.${round + 1}`, server, target));
      }
    }
    pairs[pair] = {
      baseline: summarize(describe(baseline()), bySide.baseline),
      independent: summarize(describe(baseline()), bySide.independent),
      api: summarize(describe(api()), bySide.api),
      twin: summarize(describe(api()), bySide.twin),
    };
    const perRound = (of: (round: number) => number | null) =>
      Array.from({ length: rounds }, (_, round) => of(round)).filter((value): value is number => value !== null);
    const rps = (side: keyof typeof bySide, round: number) => bySide[side][round]?.rps ?? null;
    const cpu = (side: keyof typeof bySide, round: number) => bySide[side][round]?.cpuMicros ?? null;
    const spread = (round: number) => {
      const twinToApi = ratio(cpu('twin', round), cpu('api', round), 4);
      return twinToApi === null ? null : Math.abs(twinToApi - 1);
    };
    roundRatios[pair] = {
      cpu: perRound((round) => ratio(cpu('api', round), cpu('baseline', round))),
      twinSpread: perRound(spread),
      api: perRound((round) => ratio(rps('api', round), rps('baseline', round))),
      agreement: perRound((round) => ratio(rps('baseline', round), rps('independent', round))),
      betSlipP99: perRound((round) =>
        ratio(bySide.api[round]?.p99Ms ?? null, bySide.baseline[round]?.p99Ms ?? null, 2),
      ),
    };
  }
  await Promise.all([raw.stop(), independent.stop()]);

  // A pair with an erroring run has no figure (its rps is null), as before the rounds.
  const valid = (figures: HttpResults['pairs'][HttpPairName], ...sides: Array<'api' | 'baseline' | 'independent'>) =>
    sides.every((side) => figures[side].rps !== null);
  const perPair = (of: (pair: HttpPairName) => number | null) =>
    Object.fromEntries(HTTP_PAIRS.map((pair) => [pair, of(pair)])) as Record<HttpPairName, number | null>;
  const ratios = perPair((pair) => (valid(pairs[pair], 'api', 'baseline') ? medianOf(roundRatios[pair].api, 2) : null));
  const cpuRatios = perPair((pair) => medianOf(roundRatios[pair].cpu, 2));
  const cpuNullBand = perPair((pair) => medianOf(roundRatios[pair].twinSpread, 3));
  const agreement = perPair((pair) =>
    valid(pairs[pair], 'baseline', 'independent') ? medianOf(roundRatios[pair].agreement, 2) : null,
  );
  return {
    ratios,
    agreement,
    betSlipP99Ratio: valid(pairs.betSlip, 'api', 'baseline') ? medianOf(roundRatios.betSlip.betSlipP99, 2) : null,
    cpuRatios,
    cpuNullBand,
    pairs,
    runs,
  };
}

const describe = (target: LoadTarget) => `${target.method} ${target.path}`;

/** One timed run and the serving process's CPU per answer in it. */
type TimedRun = LoadFigures & { cpuMicros: number | null };

function summarize(route: string, runs: readonly TimedRun[]): RouteFigures {
  const errors = runs.reduce((sum, run) => sum + run.errors, 0);
  return {
    route,
    rps:
      errors === 0
        ? medianOf(
            runs.map((run) => run.rps),
            0,
          )
        : null,
    p50Ms: medianOf(
      runs.map((run) => run.p50Ms),
      2,
    ),
    p99Ms: medianOf(
      runs.map((run) => run.p99Ms),
      2,
    ),
    cpuMicros: medianOf(
      runs.map((run) => run.cpuMicros).filter((value): value is number => value !== null),
      0,
    ),
    errors,
    runs: runs.length,
  };
}

/** The API's answers that the raw baseline must match in size and shape. */
interface ApiAnswers {
  readAll: string;
  betSlip: string;
}

/** A fast wrong answer is no figure: check once that each route answers what the target describes. */
async function checkApiResponses(
  context: BenchContext,
  apiUrl: string,
  merchant: SeededMerchant,
  token: string,
): Promise<ApiAnswers> {
  const { settings, checks } = context;
  const client = new MerchantClient(apiUrl, merchant);
  const readAll = await client.post(READ_ALL_PATH, {});
  const configurations = readAll.status === 200 ? (JSON.parse(readAll.text) as Array<{ games: unknown[] }>) : [];
  checks.expect(
    `readAll answers ${settings.reads.configurations} configurations × ${settings.reads.gamesPerConfiguration} games`,
    configurations.length === settings.reads.configurations &&
      configurations.every((configuration) => configuration.games.length === settings.reads.gamesPerConfiguration),
    `status ${readAll.status}, ${configurations.length} configurations, ${readAll.text.length} bytes`,
  );
  const betSlip = await client.post(BET_SLIP_PATH, { authToken: token });
  const slip = betSlip.status === 200 ? (JSON.parse(betSlip.text) as { errorCode?: number; betSlip?: unknown[] }) : {};
  checks.expect(
    `/betSlip answers a session of ${settings.reads.betSlipItems} items`,
    slip.errorCode === 0 && slip.betSlip?.length === settings.reads.betSlipItems,
    `status ${betSlip.status}, errorCode ${slip.errorCode}, ${slip.betSlip?.length} items, ${betSlip.text.length} bytes`,
  );
  const cancel = await client.post(CANCEL_PATH, { externalId: 'bench-http-check' });
  checks.expect(
    'cancel answers 200 with a job id',
    cancel.status === 200 && cancel.headers.get('x-job-id') !== null,
    `status ${cancel.status}`,
  );
  return { readAll: readAll.text, betSlip: betSlip.text };
}

/**
 * The same for the raw baseline: it must really check the signature (a wrong secret answers 401 on
 * every signed route) and really do its work (the job stored, the API's bet slip and readAll answers
 * byte for byte), or its figure would be a floor that is too low.
 */
async function checkRawResponses(
  context: BenchContext,
  label: 'raw' | 'independent',
  queueName: string,
  rawUrl: string,
  merchant: SeededMerchant,
  token: string,
  apiAnswers: ApiAnswers,
): Promise<void> {
  const { settings, checks, queue } = context;
  const bare = await fetch(`${rawUrl}${RAW_BASELINE_PATHS.bare}`, { method: 'POST', body: '{}' });
  await bare.body?.cancel();
  checks.equal(`${label} bare answers 200`, bare.status, 200);

  const forged = new MerchantClient(rawUrl, { id: merchant.id, secretKey: `${merchant.secretKey}-not` });
  for (const [path, fields] of [
    [RAW_BASELINE_PATHS.cancel, { externalId: `${label}-http-forged` }],
    [RAW_BASELINE_PATHS.betSlip, { authToken: token }],
    [RAW_BASELINE_PATHS.readAll, {}],
  ] as const) {
    checks.equal(`${label} ${path} answers 401 to a wrong signature`, (await forged.post(path, fields)).status, 401);
  }

  const client = new MerchantClient(rawUrl, merchant);
  const cancel = await client.post(RAW_BASELINE_PATHS.cancel, { externalId: `${label}-http-check` });
  const jobId = cancel.headers.get('x-job-id');
  checks.expect(
    `${label} cancel answers 200 with the id of a job it stored`,
    cancel.status === 200 && jobId !== null && jobId !== '' && (await queue.hasJob(queueName, jobId)),
    `status ${cancel.status}, job id ${jobId}`,
  );

  const betSlip = await client.post(RAW_BASELINE_PATHS.betSlip, { authToken: token });
  const slip = betSlip.status === 200 ? (JSON.parse(betSlip.text) as { betSlip?: unknown[] }) : {};
  checks.expect(
    `${label} bet slip answers the API's answer for its session of ${settings.reads.betSlipItems} items`,
    betSlip.status === 200 && betSlip.text === apiAnswers.betSlip,
    `status ${betSlip.status}, ${slip.betSlip?.length} items, ${betSlip.text.length} bytes (API ${apiAnswers.betSlip.length})`,
  );

  const readAll = await client.post(RAW_BASELINE_PATHS.readAll, {});
  checks.expect(
    `${label} readAll answers the API's readAll answer`,
    readAll.status === 200 && readAll.text === apiAnswers.readAll,
    `status ${readAll.status}, ${readAll.text.length} bytes (API ${apiAnswers.readAll.length})`,
  );
}
