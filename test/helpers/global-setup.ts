import { execSync } from 'node:child_process';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateToLatest } from '../../src/shared/db/migrator.js';

/**
 * Runs once per `npm test`. Finds Postgres and Redis (DATABASE_URL / REDIS_URL, else testcontainers
 * when Docker is there), migrates one template database, and hands its name to the test files, which
 * each clone it (CREATE DATABASE … TEMPLATE) so they can run in parallel.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    templateDatabase: string;
    /** Every database a test file makes starts with this, so teardown can sweep leftovers. */
    databasePrefix: string;
  }
}

const stops: Array<() => Promise<unknown>> = [];

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let databaseUrl = process.env.DATABASE_URL;
  let redisUrl = process.env.REDIS_URL;

  if (!databaseUrl || !redisUrl) {
    if (!dockerAvailable()) {
      throw new Error(
        'The tests need PostgreSQL and Redis. Either set DATABASE_URL and REDIS_URL ' +
          '(e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379), ' +
          'or run them where Docker is available and testcontainers will start both.',
      );
    }
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const { RedisContainer } = await import('@testcontainers/redis');
    if (!databaseUrl) {
      const postgres = await new PostgreSqlContainer('postgres:16-alpine').start();
      stops.push(() => postgres.stop());
      databaseUrl = postgres.getConnectionUri();
    }
    if (!redisUrl) {
      const redis = await new RedisContainer('redis:7-alpine').start();
      stops.push(() => redis.stop());
      redisUrl = redis.getConnectionUrl();
    }
  }

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

function dockerAvailable(): boolean {
  try {
    execSync('docker info', { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}
