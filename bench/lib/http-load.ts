import autocannon from 'autocannon';
import { loadAverage1m } from './machine.js';
import { round } from './percentiles.js';

export interface LoadTarget {
  method: 'GET' | 'POST';
  path: string;
  /** A fixed body; or `nextBody`, called for every request sent. */
  body?: string;
  nextBody?: () => string;
  /** A 200 whose body this rejects counts as an error (an error answered with 200, as /betSlip does). */
  verifyBody?: (body: string) => boolean;
}

export interface LoadFigures {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Everything that is not a good answer: connection errors, timeouts, non-2xx, rejected bodies. */
  errors: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  durationSeconds: number;
  loadAverage1m: number;
}

/**
 * One autocannon run (programmatic API, in this process) against one route: for `durationSeconds`,
 * or until `amount` requests have been answered.
 */
export function runLoad(
  baseUrl: string,
  target: LoadTarget,
  options: { connections: number; durationSeconds?: number; amount?: number },
): Promise<LoadFigures> {
  const headers: Record<string, string> = target.method === 'POST' ? { 'content-type': 'application/json' } : {};
  const { nextBody } = target;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: baseUrl,
        connections: options.connections,
        ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.durationSeconds ?? 10 }),
        timeout: 10,
        ...(target.verifyBody ? { verifyBody: target.verifyBody } : {}),
        requests: [
          {
            method: target.method,
            path: target.path,
            headers,
            ...(target.body !== undefined ? { body: target.body } : {}),
            ...(nextBody ? { setupRequest: (request) => ({ ...request, body: nextBody() }) } : {}),
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(summarize(result))),
    );
  });
}

function summarize(result: autocannon.Result): LoadFigures {
  const answered = result.requests.total;
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([code, stats]) => [code, stats.count]),
  );
  return {
    requests: answered,
    rps: round(result['2xx'] / result.duration, 0),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.non2xx + result.mismatches,
    non2xx: result.non2xx,
    statusCodes,
    durationSeconds: round(result.duration, 2),
    loadAverage1m: loadAverage1m(),
  };
}
