import type { Queue } from 'bullmq';
import type { Metrics } from '../telemetry/metrics.js';
import type { ShardedQueues } from './queues.js';

const QUEUE_STATES = [
  'waiting',
  'active',
  'delayed',
  'failed',
  'completed',
  'waiting-children',
  'prioritized',
] as const;

/**
 * The backlog read at scrape time: job counts per state (LLEN/ZCARD calls, no key scan) and how long
 * the job next in line has waited, in a few O(1) commands per queue of every shard (`shard` label: the
 * shard's number; none on an unsharded queue nor on the webhooks queue).
 */
export async function refreshQueueDepth(metrics: Metrics, queues: ShardedQueues): Promise<void> {
  const now = Date.now();
  await Promise.all(
    queues.listed().map(async ({ name, shard, queue }) => {
      try {
        const [counts, age] = await Promise.all([
          queue.getJobCounts(...QUEUE_STATES),
          oldestWaitingAgeSeconds(queue, now),
        ]);
        // No `shard` label at all on an unsharded queue: series stay as they were before shards.
        const labels = shard === '' ? { queue: name } : { queue: name, shard };
        for (const state of QUEUE_STATES) metrics.queueJobs.set({ ...labels, state }, counts[state] ?? 0);
        metrics.queueOldestWaitingAge.set(labels, age);
      } catch {
        // Redis away: keep the last values; readiness reports the outage.
      }
    }),
  );
}

/**
 * Seconds since the job next in line was added. BullMQ pushes new jobs on the head of the wait list
 * and workers take them from the tail, so the tail is the job that has waited longest: one LRANGE of
 * that one element and one HGET of its `timestamp`. It is the time since the job was created, so a
 * job back from a retry delay counts its earlier attempts too, and a bulk parent put back at the tail
 * once its parts finish shows its full age until a worker takes it a moment later (the alert waits
 * minutes before firing). Prioritized jobs (a sorted set ordered by priority, not age) are not
 * included: this gateway adds none.
 */
async function oldestWaitingAgeSeconds(queue: Queue, now: number): Promise<number> {
  const client = await queue.getBackend().client;
  for (let attempt = 0; attempt < 3; attempt++) {
    const [jobId] = await client.lrange(queue.toKey('wait'), -1, -1);
    if (jobId === undefined) return 0;
    const timestamp = await client.hget(queue.toKey(jobId), 'timestamp');
    if (timestamp !== null) return Math.max(0, (now - Number(timestamp)) / 1000);
    // A worker took that job (and it was removed) between the two reads: look at the new tail.
  }
  return 0;
}
