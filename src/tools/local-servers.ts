import { Redis } from 'ioredis';
import pg from 'pg';

/**
 * What `npm start` needs before it starts anything: a Postgres that answers (the database is created
 * when missing) and a Redis that answers. Each failure is one sentence naming the variable to set.
 */

export class LocalServerError extends Error {}

/** How long `npm start` waits for a local Postgres or Redis to answer: a server on this machine answers in milliseconds. */
const LOCAL_CONNECT_TIMEOUT_MS = 3_000;

/** Creates the database named in `databaseUrl` when it does not exist yet; true when it created it. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const target = new URL(databaseUrl);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) return false;
  // Any database lets us look; `postgres` exists on every server, the target itself may not.
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({
    connectionString: maintenance.toString(),
    connectionTimeoutMillis: LOCAL_CONNECT_TIMEOUT_MS,
  });
  try {
    await client.connect();
  } catch (error) {
    throw new LocalServerError(
      `PostgreSQL does not answer at ${redact(maintenance)} (${reason(error)}): start it, or set DATABASE_URL (in the environment or .env).`,
    );
  }
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    // Identifiers cannot be bound as parameters; the name is quoted as Postgres quotes identifiers.
    await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
    return true;
  } catch (error) {
    // Two starts at once: the other one created it first.
    if ((error as { code?: string }).code === '42P04') return false;
    throw new LocalServerError(`could not create the database "${name}" (${reason(error)}).`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Why the Redis at this URL does not answer PING within `connectTimeoutMs`, or undefined when it does. */
export async function redisProblem(
  redisUrl: string,
  connectTimeoutMs = LOCAL_CONNECT_TIMEOUT_MS,
): Promise<string | undefined> {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: connectTimeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return reason(error);
  } finally {
    redis.disconnect();
  }
}

export async function checkRedis(redisUrl: string): Promise<void> {
  const problem = await redisProblem(redisUrl);
  if (problem !== undefined) {
    throw new LocalServerError(
      `Redis does not answer at ${redact(new URL(redisUrl))} (${problem}): start it, or set REDIS_URL (in the environment or .env).`,
    );
  }
}

function redact(url: URL): string {
  const copy = new URL(url);
  if (copy.password) copy.password = '***';
  return copy.toString();
}

function reason(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return reason(error.errors[0]);
  return error instanceof Error ? error.message || error.name : String(error);
}
