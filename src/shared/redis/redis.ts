import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../config/config.js';

/** A standalone Redis or a Redis Cluster: BullMQ and every command the service sends work on both. */
export type RedisConnection = Redis | Cluster;

/** Where Redis is: one server (REDIS_URL) or the seed nodes of a cluster (REDIS_CLUSTER_NODES). */
export type RedisTarget = Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>;

/**
 * Two kinds of Redis connection, as BullMQ's production notes advise:
 * - `producer`: fails fast. Commands are not queued while Redis is away, so a request that cannot
 *   store its job gets an error at once (503) instead of waiting for a reconnect.
 * - `worker`: patient. Blocking commands retry for ever (`maxRetriesPerRequest: null`), so a worker
 *   rides out a Redis restart instead of crashing.
 *
 * With REDIS_CLUSTER_NODES the same two kinds are made as an ioredis `Cluster`, which follows MOVED
 * and ASK redirections (a resharded queue slot) and refreshes its slot map by itself.
 *
 * `autoPipelining`: commands issued in one turn of the event loop leave together, in one write (per
 * cluster node). For a connection of small independent commands sent by many requests at once, where
 * each write to the socket is a system call that costs more than the command. Never for a connection
 * BullMQ uses: its blocking commands and scripts are not written with it in mind.
 */
export function createRedis(
  where: RedisTarget | string,
  role: 'producer' | 'worker',
  connectionName: string,
  options: { autoPipelining?: boolean } = {},
): RedisConnection {
  const target: RedisTarget = typeof where === 'string' ? { REDIS_URL: where, REDIS_CLUSTER_NODES: undefined } : where;
  const failFast = role === 'producer';
  const nodeOptions: RedisOptions = {
    connectionName,
    connectTimeout: 2_000,
    // Reconnect with a growing pause, capped at 2 s, for as long as the process lives.
    retryStrategy: (times) => Math.min(times * 100, 2_000),
    maxRetriesPerRequest: failFast ? 1 : null,
    enableAutoPipelining: options.autoPipelining === true,
  };
  let redis: RedisConnection;
  if (target.REDIS_CLUSTER_NODES) {
    redis = new Cluster(target.REDIS_CLUSTER_NODES, {
      redisOptions: nodeOptions,
      enableOfflineQueue: !failFast,
      enableAutoPipelining: options.autoPipelining === true,
      // Keep trying to reach the cluster for as long as the process lives (null would give up).
      clusterRetryStrategy: (times) => Math.min(times * 100, 2_000),
      // A reshard answers MOVED for a while: follow it at once and refresh the slot map.
      retryDelayOnMoved: 0,
      retryDelayOnClusterDown: 200,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: 2_000,
    });
  } else if (target.REDIS_URL) {
    redis = new Redis(target.REDIS_URL, { ...nodeOptions, enableOfflineQueue: !failFast });
  } else {
    throw new Error('REDIS_URL or REDIS_CLUSTER_NODES is required');
  }
  // Connection errors are reported through failing commands and readiness checks; without a listener
  // ioredis would emit every reconnect attempt as an unhandled 'error' event and end the process.
  redis.on('error', () => {});
  return redis;
}

/** Closes politely, or at once when Redis is not there to answer QUIT. */
export async function closeRedis(redis: RedisConnection): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
