import { type LoadFigures, type LoadTarget, runLoad } from '../lib/http-load.js';
import { MerchantClient, signedBody } from '../lib/merchant-client.js';
import { ratio } from '../lib/percentiles.js';
import { READ_ALL_PATH } from '../lib/read-all-stream.js';
import type { SeededMerchant } from '../lib/seed.js';
import type { BenchContext } from './context.js';
import { CANCEL_PATH } from './single-cancels.phase.js';

type RouteName = 'bare' | 'cancel' | 'readAll' | 'betSlip';

export interface HttpResults {
  bareRps: number | null;
  cancelRps: number | null;
  readAllRps: number | null;
  betSlipRps: number | null;
  cancelRatio: number | null;
  readAllRatio: number | null;
  betSlipRatio: number | null;
  p50Ms: Record<RouteName, number | null>;
  p99Ms: Record<RouteName, number | null>;
  errors: Record<RouteName, number>;
  /** Every autocannon run; the bare route runs first and last, its figure is the mean of both. */
  runs: Record<string, LoadFigures>;
}

const BET_SLIP_PATH = '/betSlip';

/**
 * autocannon (-c 50) against each route of one API process, with no worker running (a cancel is
 * measured as accepted: the job stored in Redis). The figure that counts is the ratio to the bare
 * route `/healthz` of the same server, measured in the same run; a run with any error is no figure.
 */
export async function measureHttp(
  context: BenchContext,
  baseUrl: string,
  merchant: SeededMerchant,
): Promise<HttpResults> {
  const { settings, progress, checks } = context;
  const token = merchant.sessionTokens[0];
  if (!token) throw new Error('the seed returned no session token');
  await checkResponses(context, baseUrl, merchant, token);

  // One signed timestamp serves a whole run (the signature covers only merchantId + timestamp);
  // each run signs afresh, well inside the 5-minute window.
  const signedJson = (fields: Record<string, unknown>) => JSON.stringify(signedBody(merchant, fields));
  const targets: Record<RouteName, () => LoadTarget> = {
    bare: () => ({ method: 'GET', path: '/healthz' }),
    cancel: () => {
      // Every request names a reward of its own, so none shares another's job (docs/design.md §4).
      const head = signedJson({}).slice(0, -1);
      let sequence = 0;
      return {
        method: 'POST',
        path: CANCEL_PATH,
        nextBody: () => `${head},"externalId":"bench-http-${sequence++}"}`,
      };
    },
    readAll: () => ({ method: 'POST', path: READ_ALL_PATH, body: signedJson({}) }),
    betSlip: () => ({
      method: 'POST',
      path: BET_SLIP_PATH,
      body: signedJson({ authToken: token }),
      // /betSlip answers an unknown or expired token with 200 and an errorCode: not a good answer.
      verifyBody: (body) => body.includes('"errorCode":0'),
    }),
  };

  const { connections, durationSeconds, warmupSeconds } = settings.http;
  const runs: Record<string, LoadFigures> = {};
  const order: Array<[string, RouteName]> = [
    ['bare', 'bare'],
    ['cancel', 'cancel'],
    ['readAll', 'readAll'],
    ['betSlip', 'betSlip'],
    ['bareAgain', 'bare'],
  ];
  for (const [label, route] of order) {
    progress.step(`HTTP: ${label} — ${warmupSeconds} s warm-up, then ${durationSeconds} s at -c ${connections}`);
    await runLoad(baseUrl, targets[route](), { connections, durationSeconds: warmupSeconds });
    const figures = await runLoad(baseUrl, targets[route](), { connections, durationSeconds });
    runs[label] = figures;
    checks.expect(
      `http ${label}: no request errors`,
      figures.errors === 0,
      `${figures.requests} answered, ${figures.errors} errors, status codes ${JSON.stringify(figures.statusCodes)}`,
    );
    progress.step(`HTTP: ${label} ${figures.rps} req/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms`);
  }

  const bareRuns = [runs.bare, runs.bareAgain].filter((run): run is LoadFigures => run !== undefined);
  const valid = (run: LoadFigures | undefined) => (run && run.errors === 0 ? run.rps : null);
  const bareRps =
    bareRuns.length === 2 && bareRuns.every((run) => run.errors === 0)
      ? Math.round(bareRuns.reduce((sum, run) => sum + run.rps, 0) / 2)
      : null;
  const cancelRps = valid(runs.cancel);
  const readAllRps = valid(runs.readAll);
  const betSlipRps = valid(runs.betSlip);
  const bareP50 = bareRuns.length ? Math.max(...bareRuns.map((run) => run.p50Ms)) : null;
  const bareP99 = bareRuns.length ? Math.max(...bareRuns.map((run) => run.p99Ms)) : null;
  return {
    bareRps,
    cancelRps,
    readAllRps,
    betSlipRps,
    cancelRatio: ratio(cancelRps, bareRps),
    readAllRatio: ratio(readAllRps, bareRps),
    betSlipRatio: ratio(betSlipRps, bareRps),
    p50Ms: {
      bare: bareP50,
      cancel: runs.cancel?.p50Ms ?? null,
      readAll: runs.readAll?.p50Ms ?? null,
      betSlip: runs.betSlip?.p50Ms ?? null,
    },
    p99Ms: {
      bare: bareP99,
      cancel: runs.cancel?.p99Ms ?? null,
      readAll: runs.readAll?.p99Ms ?? null,
      betSlip: runs.betSlip?.p99Ms ?? null,
    },
    errors: {
      bare: bareRuns.reduce((sum, run) => sum + run.errors, 0),
      cancel: runs.cancel?.errors ?? 0,
      readAll: runs.readAll?.errors ?? 0,
      betSlip: runs.betSlip?.errors ?? 0,
    },
    runs,
  };
}

/** A fast wrong answer is no figure: check once that each route answers what the target describes. */
async function checkResponses(context: BenchContext, baseUrl: string, merchant: SeededMerchant, token: string) {
  const { settings, checks } = context;
  const client = new MerchantClient(baseUrl, merchant);
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
    `status ${betSlip.status}, errorCode ${slip.errorCode}, ${slip.betSlip?.length} items`,
  );
  const cancel = await client.post(CANCEL_PATH, { externalId: 'bench-http-check' });
  checks.expect(
    'cancel answers 200 with a job id',
    cancel.status === 200 && cancel.headers.get('x-job-id') !== null,
    `status ${cancel.status}`,
  );
}
