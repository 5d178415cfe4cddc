import { Queue } from 'bullmq';
import { defaultJobOptions, type QueueName, queueNames } from './job-catalogue.js';
import type { RedisConnection } from './redis.js';

export type CancellationQueues = Record<QueueName, Queue>;

/**
 * The two cancellation queues on one connection: the one way every process (API producer, worker,
 * tests) builds them, so all of them share the prefix, the default job options and the error guard.
 */
export function createCancellationQueues(connection: RedisConnection, prefix: string): CancellationQueues {
  // skipWaitingForReady: a producer whose Redis is away must fail its command at once (503), not wait.
  const options = { connection, prefix, defaultJobOptions, skipWaitingForReady: true };
  const queues = {
    [queueNames.single]: new Queue(queueNames.single, options),
    [queueNames.bulk]: new Queue(queueNames.bulk, options),
  } as CancellationQueues;
  // Connection trouble surfaces through failing commands; an unheard 'error' event would end the process.
  for (const queue of Object.values(queues)) queue.on('error', () => {});
  return queues;
}

export async function closeCancellationQueues(queues: CancellationQueues): Promise<void> {
  await Promise.all(Object.values(queues).map((queue) => queue.close()));
}
