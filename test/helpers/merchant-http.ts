import { type MerchantCredentials, signedBody } from './signing.js';

/**
 * Signed merchant calls to a running API process, each timed and each with a hard deadline, so that
 * a fault test can state "answered 503 within 2 s" and a hang shows up as a failed request (status 0)
 * rather than as a test that never ends.
 */

const merchantPaths = {
  cancel: '/api/v1/integration/rewards/cancel',
  bulkCancel: '/api/v1/integration/rewards/bulkCancel',
  bulkCancelByQuery: '/api/v1/integration/rewards/bulkCancelByQuery',
  jobStatus: '/api/v1/integration/jobs/status',
  readAll: '/api/v1/integration/reward-configurations/readAll',
  betSlip: '/betSlip',
} as const;

export type MerchantPath = keyof typeof merchantPaths;

export interface TimedAnswer {
  path: MerchantPath;
  /** 0 when no HTTP answer came (connection refused or reset, or the deadline passed). */
  status: number;
  body: string;
  jobId: string | null;
  /** When the request was sent and when its answer (or failure) arrived, epoch ms. */
  sentAt: number;
  answeredAt: number;
  ms: number;
  /** Why there was no answer, for status 0. */
  failure?: string;
}

export async function signedPost(
  baseUrl: string,
  merchant: MerchantCredentials,
  path: MerchantPath,
  fields: Record<string, unknown>,
  deadlineMs = 10_000,
): Promise<TimedAnswer> {
  const sentAt = Date.now();
  try {
    const response = await fetch(`${baseUrl}${merchantPaths[path]}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signedBody(merchant, fields)),
      signal: AbortSignal.timeout(deadlineMs),
    });
    const body = await response.text();
    const answeredAt = Date.now();
    return {
      path,
      status: response.status,
      body,
      jobId: response.headers.get('x-job-id'),
      sentAt,
      answeredAt,
      ms: answeredAt - sentAt,
    };
  } catch (error) {
    const answeredAt = Date.now();
    const failure = error instanceof Error ? `${error.name}: ${error.message} ${String(error.cause ?? '')}` : '?';
    return { path, status: 0, body: '', jobId: null, sentAt, answeredAt, ms: answeredAt - sentAt, failure };
  }
}

/** `errorCode` of a JSON error body, or undefined. */
export function errorCodeOf(answer: TimedAnswer): number | undefined {
  try {
    return (JSON.parse(answer.body) as { errorCode?: number }).errorCode;
  } catch {
    return undefined;
  }
}

/** A compact description for assertion messages. */
export function describeAnswer(answer: TimedAnswer): string {
  return `${answer.path} → ${answer.status} in ${answer.ms} ms ${answer.failure ?? answer.body.slice(0, 200)}`;
}
