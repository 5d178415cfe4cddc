import type { HttpPairName } from '../figures/http.js';
import { BET_SLIP_PATH, CANCEL_PATH, READ_ALL_PATH } from '../lib/api-paths.js';
import type { LoadTarget } from '../lib/http-load.js';
import { signedBody } from '../lib/merchant-client.js';
import type { SeededMerchant } from '../lib/seed.js';
import { RAW_BASELINE_PATHS } from '../raw-baseline/paths.js';

/** What one route's load sends: to the raw baseline's route, and to the API's (twin and candidates alike). */
export interface PairTargets {
  baseline: () => LoadTarget;
  api: () => LoadTarget;
}

/** Each API route and its floor on the raw baseline, as autocannon targets signed for `merchant`. */
export function httpTargets(merchant: SeededMerchant, token: string): Record<HttpPairName, PairTargets> {
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
  return {
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
}

/** `POST /raw/bare`: how a route is named in the figures. */
export const describeTarget = (target: LoadTarget) => `${target.method} ${target.path}`;
