import type { JobStateName, JobStatus, PublicJobStatus } from './job-status-schema.js';

export function isFinished(state: JobStateName): boolean {
  return state === 'completed' || state === 'failed' || state === 'cancelled';
}

/**
 * The one way a job's status reaches a merchant (the job-status and abort answers, webhook events):
 * the facts read from wherever the job is (its Redis hash, its audit row, the job in hand) as a
 * `JobStatus`, without the merchant id (the signature implies it) and without our error text — a driver
 * message can name hosts, addresses or SQL. The full text stays in the logs and the admin view.
 */
export function toPublicStatus({ merchantId: _merchantId, error, ...status }: JobStatus): PublicJobStatus {
  let generic: string | null = null;
  if (status.state === 'failed') generic = 'request could not be applied';
  else if (error) generic = 'an attempt failed, will retry';
  return { ...status, error: generic };
}
