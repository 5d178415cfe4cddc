import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../config/config.js';

/** A standalone Redis or a Redis Cluster: BullMQ and every command the service sends work on both. */
export type RedisConnection = Redis | Cluster;

/** Where Redis is: one server (REDIS_URL) or the seed nodes of a cluster (REDIS_CLUSTER_NODES). */
export type RedisTarget = Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>;

/**
 * A connection attempt that gets no answer this long is given up and retried: a fifth of ioredis' 10 s,
 * so a Redis that is back is found within seconds rather than behind an attempt to a dead address.
 */
const CONNECT_TIMEOUT_MS = 2_000;
/**
 * Reconnects wait this much longer after each failed attempt, up to RECONNECT_MAX_DELAY_MS: quick after a
 * blip, and at most one attempt every 2 s per connection during a long outage, so the service notices
 * Redis's return within 2 s.
 */
const RECONNECT_STEP_MS = 100;
const RECONNECT_MAX_DELAY_MS = 2_000;
/**
 * The wait before a command that met CLUSTERDOWN (a failover under way) is sent again: twice ioredis'
 * 100 ms, as a failover lasts seconds and each retry is a round trip to a cluster that cannot answer yet.
 */
const CLUSTER_DOWN_RETRY_MS = 200;
/** The wait before a command that met TRYAGAIN (its keys' slot mid-migration) is sent again: ioredis' own. */
const TRY_AGAIN_RETRY_MS = 100;
/**
 * How long a refresh of the slot map waits for a node's answer: twice ioredis' 1 s, so a node slowed by a
 * failover is not given up on while the stale map keeps sending commands to the wrong master.
 */
const SLOTS_REFRESH_TIMEOUT_MS = 2_000;

/** ioredis' retry strategy: the wait before reconnect attempt number `times`. */
function reconnectDelayMs(times: number): number {
  return Math.min(times * RECONNECT_STEP_MS, RECONNECT_MAX_DELAY_MS);
}

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
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Reconnect with a growing pause, capped at 2 s, for as long as the process lives.
    retryStrategy: reconnectDelayMs,
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
      clusterRetryStrategy: reconnectDelayMs,
      // A reshard answers MOVED for a while: follow it at once and refresh the slot map.
      retryDelayOnMoved: 0,
      retryDelayOnClusterDown: CLUSTER_DOWN_RETRY_MS,
      retryDelayOnTryAgain: TRY_AGAIN_RETRY_MS,
      slotsRefreshTimeout: SLOTS_REFRESH_TIMEOUT_MS,
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
