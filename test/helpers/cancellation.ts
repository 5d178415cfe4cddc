import type { Queue } from 'bullmq';
import { expect } from 'vitest';
import type { PublicJobStatus } from '../../src/shared/jobs/job-status-schema.js';
import type { TestApi } from './api.js';
import type { MerchantCredentials } from './signing.js';
import { signedBody } from './signing.js';
import { eventually } from './worker.js';

export const cancelPaths = {
  cancel: '/api/v1/integration/rewards/cancel',
  bulkCancel: '/api/v1/integration/rewards/bulkCancel',
  bulkCancelByQuery: '/api/v1/integration/rewards/bulkCancelByQuery',
  jobStatus: '/api/v1/integration/jobs/status',
} as const;

/** The job-status body, as the route's schema declares it. */
export type JobStatusBody = PublicJobStatus;

/** Sends a signed cancel request, expects the interface's empty 200 with X-Job-Id, and returns the job id. */
export async function requestCancellation(
  api: TestApi,
  merchant: MerchantCredentials,
  operation: 'cancel' | 'bulkCancel' | 'bulkCancelByQuery',
  fields: Record<string, unknown>,
): Promise<string> {
  const response = await api.post(cancelPaths[operation], signedBody(merchant, fields));
  expect(response.status).toBe(200);
  const jobId = response.headers.get('x-job-id');
  expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
  expect(await response.text()).toBe('');
  return jobId as string;
}

export async function fetchJobStatus(api: TestApi, merchant: MerchantCredentials, jobId: string) {
  return api.post(cancelPaths.jobStatus, signedBody(merchant, { jobId }));
}

/** Polls the signed status route until the job is completed or failed. */
export async function waitForJob(
  api: TestApi,
  merchant: MerchantCredentials,
  jobId: string,
  timeoutMs = 30_000,
): Promise<JobStatusBody> {
  return eventually(
    async () => {
      const response = await fetchJobStatus(api, merchant, jobId);
      if (response.status !== 200) return undefined;
      const status = (await response.json()) as JobStatusBody;
      return status.state === 'completed' || status.state === 'failed' || status.state === 'cancelled'
        ? status
        : undefined;
    },
    { timeoutMs, what: `job ${jobId} to finish` },
  );
}

/**
 * At-least-once delivery, as it happens when a worker dies after its last commit: the same job (same
 * id, same payload) is delivered once more. The finished job is removed first (BullMQ keeps one job per
 * id), then added again as the producer added it.
 */
export async function redeliver(queue: Queue, jobId: string, name: string, payload: Record<string, unknown>) {
  const finished = await queue.getJob(jobId);
  await finished?.remove();
  await queue.add(name, payload, { jobId, priority: 1 });
}
