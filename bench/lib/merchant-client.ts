import type { PublicJobStatus } from '../../src/shared/jobs/job-status-schema.js';
import { buildSignedFields } from '../../src/tools/signed-request.js';
import { sleep } from './progress.js';

export interface MerchantCredentials {
  id: string;
  secretKey: string;
}

export type JobStatus = PublicJobStatus;

/** Signs a body as a merchant does, with the signer of `npm run sign` (the API verifies with the same HMAC). */
export function signedBody(
  merchant: MerchantCredentials,
  fields: Record<string, unknown> = {},
  timestamp = Date.now(),
): Record<string, unknown> {
  return buildSignedFields(merchant.id, merchant.secretKey, timestamp, fields);
}

/** Signed calls to the merchant API, each freshly signed. */
export class MerchantClient {
  constructor(
    readonly baseUrl: string,
    readonly merchant: MerchantCredentials,
  ) {}

  async post(
    path: string,
    fields: Record<string, unknown>,
  ): Promise<{ status: number; headers: Headers; text: string }> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signedBody(this.merchant, fields)),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  /** Sends a cancel request and returns the job id the API answered with. */
  async enqueue(path: string, fields: Record<string, unknown>): Promise<string> {
    const { status, headers, text } = await this.post(path, fields);
    const jobId = headers.get('x-job-id');
    if (status !== 200 || !jobId) throw new Error(`${path} answered ${status} without a job id: ${text.slice(0, 300)}`);
    return jobId;
  }

  /**
   * enqueue, but a 503 (Redis did not take the job within the API's deadline) or 429 is answered as a
   * merchant would: the same request again after its Retry-After. A job stored despite the 503 is
   * still waiting, so the identical retry gets its job id; one already finished is done again.
   */
  async enqueueRetrying(
    path: string,
    fields: Record<string, unknown>,
    maxAttempts = 10,
  ): Promise<{ jobId: string; retries: number }> {
    for (let attempt = 1; ; attempt++) {
      const { status, headers, text } = await this.post(path, fields);
      const jobId = headers.get('x-job-id');
      if (status === 200 && jobId) return { jobId, retries: attempt - 1 };
      if ((status !== 503 && status !== 429) || attempt >= maxAttempts) {
        throw new Error(`${path} answered ${status} without a job id (attempt ${attempt}): ${text.slice(0, 300)}`);
      }
      const retryAfterSeconds = Number(headers.get('retry-after'));
      await sleep(Number.isFinite(retryAfterSeconds) && retryAfterSeconds > 0 ? retryAfterSeconds * 1_000 : 1_000);
    }
  }

  async jobStatus(jobId: string): Promise<JobStatus> {
    const { status, text } = await this.post('/api/v1/integration/jobs/status', { jobId });
    if (status !== 200) throw new Error(`job status of ${jobId} answered ${status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as JobStatus;
  }
}
