import { Redis, type RedisOptions } from 'ioredis';

/**
 * Two kinds of Redis connection, as BullMQ's production notes advise:
 * - `producer`: fails fast. Commands are not queued while Redis is away, so a request that cannot
 *   store its job gets an error at once (503) instead of waiting for a reconnect.
 * - `worker`: patient. Blocking commands retry for ever (`maxRetriesPerRequest: null`), so a worker
 *   rides out a Redis restart instead of crashing.
 */
export function createRedis(url: string, role: 'producer' | 'worker', connectionName: string): Redis {
  const common: RedisOptions = {
    connectionName,
    connectTimeout: 2_000,
    // Reconnect with a growing pause, capped at 2 s, for as long as the process lives.
    retryStrategy: (times) => Math.min(times * 100, 2_000),
  };
  const options: RedisOptions =
    role === 'producer'
      ? { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 1 }
      : { ...common, enableOfflineQueue: true, maxRetriesPerRequest: null };
  const redis = new Redis(url, options);
  // Connection errors are reported through failing commands and readiness checks; without a listener
  // ioredis would print every reconnect attempt as an unhandled error event.
  redis.on('error', () => {});
  return redis;
}
