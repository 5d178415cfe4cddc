import { Queue } from 'bullmq';
import { webhookJobOptions, webhookQueueName } from '../webhooks/webhook-catalogue.js';
import { defaultJobOptions, type QueueName, queueNames } from './job-catalogue.js';
import type { RedisConnection } from './redis.js';

/** Every queue of the service, by name: the two cancellation queues and the webhooks queue. */
export type Queues = Record<QueueName | typeof webhookQueueName, Queue>;

/**
 * Every queue on one connection: the one place a Queue is built, so every process (API producer,
 * worker, tests) shares the prefix, the default job options and the error guard, and the dashboard
 * and `gateway_queue_jobs` list them all.
 */
export function createQueues(connection: RedisConnection, prefix: string): Queues {
  // skipWaitingForReady: a producer whose Redis is away must fail its command at once (503), not wait.
  const cancellation = { connection, prefix, defaultJobOptions, skipWaitingForReady: true };
  const queues: Queues = {
    [queueNames.single]: new Queue(queueNames.single, cancellation),
    [queueNames.bulk]: new Queue(queueNames.bulk, cancellation),
    // No request waits on a webhook event: it may wait for Redis (the notifier bounds how long it is held).
    [webhookQueueName]: new Queue(webhookQueueName, { connection, prefix, defaultJobOptions: webhookJobOptions }),
  };
  // Connection trouble surfaces through failing commands; an unheard 'error' event would end the process.
  for (const queue of Object.values(queues)) queue.on('error', () => {});
  return queues;
}

export async function closeQueues(queues: Queues): Promise<void> {
  await Promise.all(Object.values(queues).map((queue) => queue.close()));
}
