import type { JobStatus, MerchantClient } from './merchant-client.js';
import { sleep } from './progress.js';

export interface FinishedJob {
  status: JobStatus;
  /** Epoch milliseconds when the poll first saw it finished. */
  seenAt: number;
}

/**
 * Polls the signed job status of each job until it is completed or failed, one job at a time in the
 * given order (jobs of one merchant run in the order they were accepted, so each poll usually waits
 * only for the job that is due). Throws once `timeoutMs` has passed without a job finishing: the
 * clock restarts with every finished job, so a long list that keeps moving is never cut short.
 */
export async function waitForJobs(
  client: MerchantClient,
  jobIds: readonly string[],
  options: { pollIntervalMs: number; timeoutMs: number; label: string },
): Promise<Map<string, FinishedJob>> {
  const finished = new Map<string, FinishedJob>();
  for (const jobId of jobIds) {
    const deadline = performance.now() + options.timeoutMs;
    for (;;) {
      const status = await client.jobStatus(jobId);
      if (status.state === 'completed' || status.state === 'failed') {
        finished.set(jobId, { status, seenAt: Date.now() });
        break;
      }
      if (performance.now() > deadline) {
        throw new Error(
          `${options.label}: job ${jobId} not finished after ${options.timeoutMs} ms more (${status.state}, ` +
            `${finished.size} of ${jobIds.length} finished)`,
        );
      }
      await sleep(options.pollIntervalMs);
    }
  }
  return finished;
}
