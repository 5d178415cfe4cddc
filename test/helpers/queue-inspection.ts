import { type Job, Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { batchIdOf } from '../../src/shared/cancellations/member-ids.js';
import { partJobId } from '../../src/shared/jobs/job-catalogue.js';
import { type QueueName, queueNames } from '../../src/shared/redis/redis-keys.js';

/**
 * The queue job that holds a merchant's job id: the job itself, or, for a single cancel stored with
 * others, the batch that lists it (or, once finished and its requests dropped, the batch its id names).
 */
export async function queueJobHolding(queues: Iterable<Queue>, jobId: string): Promise<Job | undefined> {
  let single: Queue | undefined;
  for (const queue of queues) {
    const job = await queue.getJob(jobId);
    if (job) return job;
    if (queue.name === queueNames.single) single = queue;
  }
  const batch = await single?.getJob(batchIdOf(jobId));
  if (!batch || batch.id === jobId) return undefined;
  // A finished batch has dropped its requests: the id alone names it.
  const requests = (batch.data as { requests?: Array<{ jobId: string }> }).requests;
  return requests === undefined || requests.some((request) => request.jobId === jobId) ? batch : undefined;
}

/**
 * Read-only views of the service's queues from a test, to see what the API stored and what the
 * workers did with it: a job's state, how many attempts it used, which parts a split job has.
 */
export interface QueueInspector {
  queues: Record<QueueName, Queue>;
  /** The queue job holding this id in whichever queue holds it (a single cancel's batch, see above). */
  find(jobId: string): Promise<Job | undefined>;
  /** A merchant's job and the parts it was split into (ids derived from its own). */
  withParts(jobId: string): Promise<Job[]>;
  /** Jobs counted by state, over both queues. */
  counts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export function inspectQueues(connection: Redis | Cluster, prefix: string): QueueInspector {
  const queues = {
    [queueNames.single]: new Queue(queueNames.single, { connection, prefix }),
    [queueNames.bulk]: new Queue(queueNames.bulk, { connection, prefix }),
  } as Record<QueueName, Queue>;
  const find = (jobId: string) => queueJobHolding(Object.values(queues), jobId);
  return {
    queues,
    find,
    async withParts(jobId) {
      const root = await find(jobId);
      if (!root) return [];
      const jobs = [root];
      for (let index = 0; ; index++) {
        const part = await queues[queueNames.bulk].getJob(partJobId(jobId, index));
        if (!part) break;
        jobs.push(part);
      }
      return jobs;
    },
    async counts() {
      const total: Record<string, number> = {};
      for (const queue of Object.values(queues)) {
        const counts = await queue.getJobCounts();
        for (const [state, n] of Object.entries(counts)) total[state] = (total[state] ?? 0) + n;
      }
      return total;
    },
    async close() {
      await Promise.all(Object.values(queues).map((queue) => queue.close()));
    },
  };
}
