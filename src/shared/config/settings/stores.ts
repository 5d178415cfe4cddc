import { z } from 'zod';
import { positiveInt, requiredUrl } from './setting-types.js';

/** Where the service keeps its state: the process kind, Postgres (and its read replica), Redis, the reward partitions. */
export const storeSettings = {
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  DATABASE_URL: requiredUrl(/^postgres(ql)?$/, 'postgres://'),
  /**
   * A streaming replica of DATABASE_URL (optional). The API sends the reads that tolerate a second of
   * lag there (readAll, dry runs, finished jobs' status, job rewards pages) while the replica's lag is
   * within READ_MAX_LAG_MS, and to the primary otherwise; with the primary down they still answer from
   * the replica. Unset: every read goes to DATABASE_URL.
   */
  DATABASE_READ_URL: z
    .string()
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? undefined : value))
    .pipe(requiredUrl(/^postgres(ql)?$/, 'postgres://').optional()),
  /** Most replica lag (ms) at which reads still go to the replica; behind that, they go to the primary. */
  READ_MAX_LAG_MS: positiveInt(1_000),
  /** How often the API measures the replica's lag (and whether each pool answers). */
  READ_LAG_POLL_MS: positiveInt(200),
  /** Required unless REDIS_CLUSTER_NODES is set. */
  REDIS_URL: requiredUrl(/^rediss?$/, 'redis://').optional(),
  /**
   * `host:port,host:port,...`: seed nodes of a Redis Cluster. When set, every process talks to the
   * cluster (the queue prefix's hash tag keeps each queue in one slot) and REDIS_URL is not used.
   */
  REDIS_CLUSTER_NODES: z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined || value.trim() === '') return undefined;
      const nodes = value.split(',').map((entry) => entry.trim());
      const parsed = [];
      for (const entry of nodes) {
        const match = /^(?<host>[^:\s]+|\[[0-9a-fA-F:]+\]):(?<port>\d{1,5})$/.exec(entry);
        if (!match?.groups) {
          context.addIssue({ code: 'custom', message: 'must be a comma-separated list of host:port' });
          return z.NEVER;
        }
        parsed.push({ host: (match.groups.host as string).replace(/^\[|\]$/g, ''), port: Number(match.groups.port) });
      }
      return parsed;
    }),
  /**
   * Hash partitions of `rewards` (by merchant_id), made by the first `npm run migrate` of a database
   * and fixed from then on: a later value changes nothing (the migrate command warns).
   */
  REWARD_PARTITIONS: z.coerce.number().int().min(1).max(1024).default(16),
};
