import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { type Config, loadConfig } from '../../src/shared/config/config.js';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { withDatabase } from './global-setup.js';

export interface TestEnvironment {
  /** A database of this file's own, cloned from the migrated template. */
  db: Db;
  databaseUrl: string;
  redisUrl: string;
  /** A queue prefix of this file's own (with a hash tag, as in production). */
  queuePrefix: string;
  /** The run's key ring as SECRETS_KEYS text: what a process started by a test is given. */
  secretsKeys: string;
  /** Configuration as a process would load it, pointed at this file's database and prefix. */
  config: Config;
  /** Drops the database and the file's queue keys. */
  close(): Promise<void>;
}

/**
 * One isolated environment per test file: its own database (cloned from the template in
 * milliseconds) and its own queue prefix, so that files run in parallel against one Postgres and
 * one Redis without seeing each other.
 */
export async function createTestEnvironment(overrides: Record<string, string> = {}): Promise<TestEnvironment> {
  const serverUrl = inject('databaseUrl');
  const redisUrl = inject('redisUrl');
  const suffix = randomBytes(4).toString('hex');
  const database = `${inject('databasePrefix')}_${suffix}`;
  const admin = new Kysely<any>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: serverUrl, max: 1 }) }),
  });
  await cloneTemplate(admin, inject('templateDatabase'), database);

  const databaseUrl = withDatabase(serverUrl, database);
  const queuePrefix = `{test-${suffix}}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: queuePrefix,
    LOG_LEVEL: 'silent',
    MERCHANT_CACHE_TTL_MS: '0',
    READ_CACHE_TTL_MS: '0',
    METRICS_ENABLED: 'false',
    ADMIN_TOKEN: 'test-admin-token-0123456789abcdef0123',
    SECRETS_KEYS: inject('secretsKeys'),
    ...overrides,
  });
  const db = createDb({ connectionString: databaseUrl, poolSize: 5, applicationName: 'rewards-test' });

  return {
    db,
    databaseUrl,
    redisUrl,
    queuePrefix,
    secretsKeys: inject('secretsKeys'),
    config,
    async close() {
      await db.destroy();
      await sql`DROP DATABASE IF EXISTS ${sql.id(database)} WITH (FORCE)`.execute(admin);
      await admin.destroy();
      await deleteQueueKeys(redisUrl, queuePrefix);
    },
  };
}

async function cloneTemplate(admin: Kysely<any>, template: string, database: string): Promise<void> {
  // Two clones of one template at the same instant can collide ("source database is being accessed");
  // a short retry rides over it.
  for (let attempt = 1; ; attempt++) {
    try {
      await sql`CREATE DATABASE ${sql.id(database)} TEMPLATE ${sql.id(template)}`.execute(admin);
      return;
    } catch (error) {
      if (attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

async function deleteQueueKeys(redisUrl: string, prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, { lazyConnect: true });
  try {
    await redis.connect();
    // The prefix's own keys and its queue shards' (`{test-x}` → `{test-x-3}`, redis-keys.ts).
    for (const pattern of [`${prefix}:*`, `${prefix.slice(0, -1)}-*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.unlink(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}
