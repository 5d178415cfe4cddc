import type { Queue } from 'bullmq';
import type { Metrics } from '../metrics.js';

const QUEUE_STATES = [
  'waiting',
  'active',
  'delayed',
  'failed',
  'completed',
  'waiting-children',
  'prioritized',
] as const;

/** Queue depth read at scrape time: BullMQ's counts are LLEN/ZCARD calls, no key scan. */
export async function refreshQueueDepth(metrics: Metrics, queues: Record<string, Queue>): Promise<void> {
  await Promise.all(
    Object.entries(queues).map(async ([name, queue]) => {
      try {
        const counts = await queue.getJobCounts(...QUEUE_STATES);
        for (const state of QUEUE_STATES) metrics.queueJobs.set({ queue: name, state }, counts[state] ?? 0);
      } catch {
        // Redis away: keep the last values; readiness reports the outage.
      }
    }),
  );
}
