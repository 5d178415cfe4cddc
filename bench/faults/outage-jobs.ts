import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { queueNames } from '../../src/shared/redis/redis-keys.js';
import type { JobStatus, MerchantClient } from '../lib/merchant-client.js';
import { pollUntil } from '../lib/progress.js';

/** What the outage run reads of the jobs' work: rewards each job carried, job states, failed jobs. */

export async function countCancelledBy(db: pg.Pool, jobId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM rewards WHERE cancellation_job_id = $1', [
    jobId,
  ]);
  return Number(rows[0]?.n ?? 0);
}

export async function countCancelledByAnySingle(db: pg.Pool, rewardIds: readonly string[]): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    "SELECT count(*) AS n FROM rewards WHERE id = ANY($1::uuid[]) AND status = 'CANCELLED'",
    [rewardIds],
  );
  return Number(rows[0]?.n ?? 0);
}

export async function waitForJob(client: MerchantClient, jobId: string, guard: () => void): Promise<JobStatus> {
  return pollUntil(
    async () => {
      guard();
      const status = await client.jobStatus(jobId).catch(() => undefined);
      return status && (status.state === 'completed' || status.state === 'failed') ? status : undefined;
    },
    { intervalMs: 500, timeoutMs: 900_000, what: `job ${jobId} to finish` },
  );
}

export async function failedJobCount(redisUrl: string, prefix: string): Promise<number> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  connection.on('error', () => {});
  try {
    let failed = 0;
    for (const name of Object.values(queueNames)) {
      const queue = new Queue(name, { connection, prefix });
      failed += await queue.getFailedCount();
      await queue.close();
    }
    return failed;
  } finally {
    connection.disconnect();
  }
}
