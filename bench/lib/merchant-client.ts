import type { PublicJobStatus } from '../../src/shared/job-status-schema.js';
import { buildSignedFields } from '../../src/tools/signed-request.js';

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

  async jobStatus(jobId: string): Promise<JobStatus> {
    const { status, text } = await this.post('/api/v1/integration/jobs/status', { jobId });
    if (status !== 200) throw new Error(`job status of ${jobId} answered ${status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as JobStatus;
  }
}
