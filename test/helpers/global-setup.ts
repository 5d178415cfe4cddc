import { execSync } from 'node:child_process';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateToLatest } from '../../src/shared/db/migrator.js';
import { generateKeyRingText } from '../../src/shared/secrets/key-ring-text.js';
import { redisProblem } from '../../src/tools/local-servers.js';

/**
 * Runs once per `npm test` (the integration project). Finds Postgres and Redis: DATABASE_URL /
 * REDIS_URL when set, else the default local ports when something answers there, else testcontainers
 * when Docker is there. Then it migrates one template database and hands its name to the test files,
 * which each clone it (CREATE DATABASE … TEMPLATE) so they can run in parallel.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    templateDatabase: string;
    /** Every database a test file makes starts with this, so teardown can sweep leftovers. */
    databasePrefix: string;
    /** The run's key ring (SECRETS_KEYS): made afresh for every run, handed to every test process. */
    secretsKeys: string;
  }
}

const LOCAL_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';

const stops: Array<() => Promise<unknown>> = [];

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const databaseUrl = await findServer('PostgreSQL', 'DATABASE_URL', LOCAL_DATABASE_URL, probePostgres, startPostgres);
  const redisUrl = await findServer('Redis', 'REDIS_URL', LOCAL_REDIS_URL, probeRedis, startRedis);

  const databasePrefix = `rewards_test_${process.pid}`;
  const templateDatabase = `${databasePrefix}_template`;
  const admin = adminDb(databaseUrl);
  await sql`DROP DATABASE IF EXISTS ${sql.id(templateDatabase)} WITH (FORCE)`.execute(admin);
  await sql`CREATE DATABASE ${sql.id(templateDatabase)}`.execute(admin);
  const template = adminDb(withDatabase(databaseUrl, templateDatabase));
  await migrateToLatest(template);
  await template.destroy();

  project.provide('databaseUrl', databaseUrl);
  project.provide('redisUrl', redisUrl);
  project.provide('templateDatabase', templateDatabase);
  project.provide('databasePrefix', databasePrefix);
  project.provide('secretsKeys', process.env.SECRETS_KEYS || generateKeyRingText('test1'));

  return async () => {
    // Test files drop their own databases; this sweeps what a crashed file left, then the template.
    const leftovers = await sql<{ datname: string }>`
      SELECT datname FROM pg_database WHERE datname LIKE ${`${databasePrefix}_%`}
    `.execute(admin);
    for (const { datname } of leftovers.rows) {
      await sql`DROP DATABASE IF EXISTS ${sql.id(datname)} WITH (FORCE)`.execute(admin);
    }
    await admin.destroy();
    for (const stop of stops) await stop();
  };
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

function adminDb(url: string): Kysely<any> {
  return new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }) });
}

/**
 * The URL of a server the tests can use. When none can be found the run stops here with one sentence
 * saying what to do: a stack trace or "no test files found" would only hide it.
 */
async function findServer(
  what: string,
  variable: string,
  localUrl: string,
  probe: (url: string) => Promise<string | undefined>,
  startContainer: () => Promise<string>,
): Promise<string> {
  const configured = process.env[variable];
  if (configured) {
    const problem = await probe(configured);
    if (problem) stop(`${variable} is set, but ${what} at ${redact(configured)} does not answer (${problem}).`);
    return configured;
  }
  if (!(await probe(localUrl))) return localUrl;
  if (dockerAvailable()) return startContainer();
  return stop(
    `The tests need ${what}: nothing answers at ${redact(localUrl)}, ${variable} is not set and Docker is not available — start ${what} locally or set ${variable} (see "Tests" in README.md).`,
  );
}

function stop(sentence: string): never {
  process.stderr.write(`\n${sentence}\n\n`);
  process.exit(1);
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/** undefined when the server answers, else why not. */
async function probePostgres(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function probeRedis(url: string): Promise<string | undefined> {
  return redisProblem(url, 2_000);
}

async function startPostgres(): Promise<string> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const postgres = await new PostgreSqlContainer('postgres:16-alpine').start();
  stops.push(() => postgres.stop());
  return postgres.getConnectionUri();
}

async function startRedis(): Promise<string> {
  const { RedisContainer } = await import('@testcontainers/redis');
  const redis = await new RedisContainer('redis:7-alpine').start();
  stops.push(() => redis.stop());
  return redis.getConnectionUrl();
}

function dockerAvailable(): boolean {
  try {
    execSync('docker info', { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}
