import { sql } from 'kysely';
import type { Db } from '../db/client.js';
import type { RedisConnection } from '../redis/redis.js';
import { readinessProbeKey } from '../redis/redis-keys.js';
import type { ShardLayout } from '../redis/shards.js';
import type { Metrics } from '../telemetry/metrics.js';
import { noAnswerWithin, withDeadline } from './deadline.js';

export interface Readiness {
  ready: boolean;
  checks: { postgres: 'ok' | 'unavailable'; redis: 'ok' | 'unavailable' };
}

/**
 * Both processes are ready only while Postgres and Redis answer, each within `timeoutMs`
 * (READINESS_CHECK_TIMEOUT_MS). The Redis
 * check reads a key of each queue shard's slot (and of QUEUE_PREFIX's, home of the webhooks queue), so
 * it reaches every node that owns queues: on a cluster any node answers PING, but only the owner of a
 * shard's slot can store that shard's jobs (one EXISTS per shard, sent together). With
 * `metrics`, the answer is also kept in the `gateway_ready` gauge, which /metrics refreshes on every
 * scrape so that an alert does not depend on an orchestrator probing /readyz.
 */
export async function checkReadiness(
  db: Db,
  redis: RedisConnection,
  shards: ShardLayout,
  timeoutMs: number,
  metrics?: Metrics,
): Promise<Readiness> {
  const [postgres, redisCheck] = await Promise.allSettled([
    withDeadline(sql`SELECT 1`.execute(db), timeoutMs, () => noAnswerWithin(timeoutMs)),
    withDeadline(probeShards(redis, shards), timeoutMs, () => noAnswerWithin(timeoutMs)),
  ]);
  const checks = {
    postgres: postgres.status === 'fulfilled' ? ('ok' as const) : ('unavailable' as const),
    redis: redisCheck.status === 'fulfilled' ? ('ok' as const) : ('unavailable' as const),
  };
  const ready = checks.postgres === 'ok' && checks.redis === 'ok';
  metrics?.ready.set(ready ? 1 : 0);
  return { ready, checks };
}

function probeShards(redis: RedisConnection, shards: ShardLayout): Promise<number[]> {
  const prefixes = new Set([shards.prefix, ...shards.allShards().map((shard) => shards.shardPrefix(shard))]);
  return Promise.all([...prefixes].map((prefix) => redis.exists(readinessProbeKey(prefix))));
}
