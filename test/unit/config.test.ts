import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/shared/config/config.js';

const required = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/rewards',
  REDIS_URL: 'redis://127.0.0.1:6379',
};

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('loadConfig accepted the environment');
}

describe('loadConfig', () => {
  it('fills the documented defaults when only the URLs are set', () => {
    const config = loadConfig(required);
    expect(config).toMatchObject({
      DATABASE_URL: required.DATABASE_URL,
      REDIS_URL: required.REDIS_URL,
      PORT: 3000,
      WORKER_PORT: 3001,
      LOG_LEVEL: 'info',
      SIGNATURE_WINDOW_MS: 300_000,
      BODY_LIMIT_BYTES: 2 * 1024 * 1024,
      BULK_MAX_ITEMS: 10_000,
      TRUST_PROXY: [],
      RATE_LIMIT_PER_SECOND: 1_000,
      RATE_LIMIT_TIMEOUT_MS: 100,
      RATE_LIMIT_FALLBACK_MAX_MERCHANTS: 10_000,
      SMALL_BODY_LIMIT_BYTES: 16 * 1024,
      UNAUTHENTICATED_BODY_BYTES_MAX: 64 * 1024 * 1024,
      HTTP_REQUEST_TIMEOUT_MS: 30_000,
      HTTP_HEADERS_TIMEOUT_MS: 30_000,
      MAX_QUEUED_JOBS: 100,
      MERCHANT_CACHE_MAX_ENTRIES: 10_000,
      MERCHANT_CACHE_MAX_BYTES: 16 * 1024 * 1024,
      READ_CACHE_MAX_ENTRIES: 10_000,
      READ_CACHE_MAX_BYTES: 32 * 1024 * 1024,
      QUEUE_PREFIX: '{rewards}',
    });
    // The admin API and dashboard stay disabled until a token is configured.
    expect(config.ADMIN_TOKEN).toBeUndefined();
  });

  it('reads numbers from their decimal text', () => {
    const config = loadConfig({ ...required, PORT: '8080', SIGNATURE_WINDOW_MS: '60000', RATE_LIMIT_PER_SECOND: '5' });
    expect(config.PORT).toBe(8080);
    expect(config.SIGNATURE_WINDOW_MS).toBe(60_000);
    expect(config.RATE_LIMIT_PER_SECOND).toBe(5);
  });

  it('takes RATE_LIMIT_PER_SECOND=0: the default rate limit switched off', () => {
    expect(loadConfig({ ...required, RATE_LIMIT_PER_SECOND: '0' }).RATE_LIMIT_PER_SECOND).toBe(0);
  });

  it('treats an empty ADMIN_TOKEN as unset', () => {
    expect(loadConfig({ ...required, ADMIN_TOKEN: '' }).ADMIN_TOKEN).toBeUndefined();
  });

  it.each([
    ['DATABASE_URL', { REDIS_URL: required.REDIS_URL }],
    ['DATABASE_URL', { ...required, DATABASE_URL: 'mysql://db/rewards' }],
    ['REDIS_URL', { ...required, REDIS_URL: 'http://127.0.0.1:6379' }],
    ['PORT', { ...required, PORT: 'eighty' }],
    ['PORT', { ...required, PORT: '70000' }],
    ['WORKER_PORT', { ...required, WORKER_PORT: '-1' }],
    ['LOG_LEVEL', { ...required, LOG_LEVEL: 'loud' }],
    ['ADMIN_TOKEN', { ...required, ADMIN_TOKEN: 'short' }],
    ['SIGNATURE_WINDOW_MS', { ...required, SIGNATURE_WINDOW_MS: '0' }],
    ['BODY_LIMIT_BYTES', { ...required, BODY_LIMIT_BYTES: '1.5' }],
    ['MAX_QUEUED_JOBS', { ...required, MAX_QUEUED_JOBS: '0' }],
    ['RATE_LIMIT_TIMEOUT_MS', { ...required, RATE_LIMIT_TIMEOUT_MS: '0' }],
    ['RATE_LIMIT_PER_SECOND', { ...required, RATE_LIMIT_PER_SECOND: '-1' }],
    ['SMALL_BODY_LIMIT_BYTES', { ...required, SMALL_BODY_LIMIT_BYTES: '0' }],
    ['HTTP_REQUEST_TIMEOUT_MS', { ...required, HTTP_REQUEST_TIMEOUT_MS: '0' }],
    ['HTTP_HEADERS_TIMEOUT_MS', { ...required, HTTP_HEADERS_TIMEOUT_MS: '40000' }],
    ['READ_CACHE_MAX_BYTES', { ...required, READ_CACHE_MAX_BYTES: '-1' }],
    ['METRICS_ENABLED', { ...required, METRICS_ENABLED: 'maybe' }],
    ['TRUST_PROXY', { ...required, TRUST_PROXY: 'proxy.internal' }],
  ])('names %s when its value is wrong', (variable, env) => {
    const error = errorOf(env);
    expect(error.message).toMatch(new RegExp(`^\\s*${variable}: `, 'm'));
  });

  it('reports a missing or empty URL as required, a wrong one by its shape', () => {
    const missing = errorOf({ REDIS_URL: '' });
    expect(missing.message).toMatch(/^\s*DATABASE_URL: required$/m);
    expect(missing.message).toMatch(/^\s*REDIS_URL: required$/m);
    expect(errorOf({ ...required, DATABASE_URL: 'mysql://db/rewards' }).message).toMatch(
      /^\s*DATABASE_URL: must be a postgres:\/\/ URL$/m,
    );
  });

  it('keeps records 30 days by default and accepts a retention down to one minute, not below', () => {
    expect(loadConfig(required).RETENTION_MS).toBe(30 * 24 * 60 * 60 * 1000);
    expect(loadConfig({ ...required, RETENTION_MS: '60000' }).RETENTION_MS).toBe(60_000);
    expect(errorOf({ ...required, RETENTION_MS: '59999' }).message).toMatch(
      /^\s*RETENTION_MS: must be at least 60000 \(one minute\)$/m,
    );
  });

  it('makes 16 rewards partitions by default, 1 to 1024, and names a wrong REWARD_PARTITIONS', () => {
    expect(loadConfig(required).REWARD_PARTITIONS).toBe(16);
    expect(loadConfig({ ...required, REWARD_PARTITIONS: '1' }).REWARD_PARTITIONS).toBe(1);
    for (const wrong of ['0', '1025', '2.5', 'many']) {
      expect(errorOf({ ...required, REWARD_PARTITIONS: wrong }).message).toMatch(/^\s*REWARD_PARTITIONS: /m);
    }
  });

  it('keeps the timeouts and lifetimes an operator may tune at their defaults, and refuses them out of bounds', () => {
    expect(loadConfig(required)).toMatchObject({
      PORTAL_LINK_LIFETIME_MS: 15 * 60 * 1000,
      PORTAL_SESSION_LIFETIME_MS: 8 * 60 * 60 * 1000,
      READINESS_CHECK_TIMEOUT_MS: 1_000,
      DB_PROBE_INTERVAL_MS: 1_000,
      DB_PROBE_TIMEOUT_MS: 1_000,
      AUDIT_OUTBOX_FLUSH_INTERVAL_MS: 5_000,
      WEBHOOK_PREVIOUS_SECRET_MS: 24 * 60 * 60 * 1000,
      RETENTION_ABANDONED_DELIVERY_MS: 7 * 24 * 60 * 60 * 1000,
    });
    expect(loadConfig({ ...required, WEBHOOK_PREVIOUS_SECRET_MS: '0' }).WEBHOOK_PREVIOUS_SECRET_MS).toBe(0);
    const wrong: Record<string, string[]> = {
      PORTAL_LINK_LIFETIME_MS: ['59999', '86400001'],
      PORTAL_SESSION_LIFETIME_MS: ['59999', '604800001'],
      READINESS_CHECK_TIMEOUT_MS: ['0', '30001'],
      DB_PROBE_INTERVAL_MS: ['99', '60001'],
      DB_PROBE_TIMEOUT_MS: ['99', '60001'],
      AUDIT_OUTBOX_FLUSH_INTERVAL_MS: ['99', '600001'],
      WEBHOOK_PREVIOUS_SECRET_MS: ['-1', '2592000001'],
      RETENTION_ABANDONED_DELIVERY_MS: ['86399999', 'a week'],
    };
    for (const [variable, values] of Object.entries(wrong)) {
      for (const value of values) {
        expect(errorOf({ ...required, [variable]: value }).message).toMatch(new RegExp(`^\\s*${variable}: `, 'm'));
      }
    }
  });

  it('names every wrong variable at once, and not the good ones', () => {
    const error = errorOf({ ...required, PORT: 'x', LOG_LEVEL: 'loud' });
    expect(error.message).toMatch(/^\s*PORT: /m);
    expect(error.message).toMatch(/^\s*LOG_LEVEL: /m);
    expect(error.message).not.toMatch(/DATABASE_URL|REDIS_URL/);
  });
});

describe('loadConfigOrExit', () => {
  it('stops the process with status 1 and a message naming the variable', () => {
    const configModule = fileURLToPath(new URL('../../src/shared/config/config.ts', import.meta.url));
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '-e', `import(${JSON.stringify(configModule)}).then((m) => m.loadConfigOrExit())`],
      { env: { PATH: process.env.PATH, ...required, PORT: 'not-a-port' }, encoding: 'utf8', timeout: 20_000 },
    );
    expect(child.status).toBe(1);
    expect(child.stderr).toMatch(/^\s*PORT: /m);
    // A message, not a stack trace.
    expect(child.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('.env', () => {
  const configModule = fileURLToPath(new URL('../../src/shared/config/config.ts', import.meta.url));
  const printPorts = `import(${JSON.stringify(configModule)}).then((m) => { const c = m.loadConfigOrExit(); console.log(c.PORT, c.WORKER_PORT, c.DATABASE_URL); })`;

  // The child runs in a scratch directory, so tsx is named by its full address.
  const tsxLoader = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

  function runIn(directory: string, env: Record<string, string>) {
    return spawnSync(process.execPath, ['--import', tsxLoader, '-e', printPorts], {
      cwd: directory,
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
      timeout: 20_000,
    });
  }

  it('is loaded by loadConfigOrExit from the working directory; variables already set win', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rewards-dotenv-'));
    try {
      writeFileSync(
        join(directory, '.env'),
        `DATABASE_URL=${required.DATABASE_URL}\nREDIS_URL=${required.REDIS_URL}\nPORT=4321\nWORKER_PORT=4322\n`,
      );
      const child = runIn(directory, { WORKER_PORT: '5555' });
      expect(child.stderr).toBe('');
      expect(child.stdout.trim()).toBe(`4321 5555 ${required.DATABASE_URL}`);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('is not read by test processes (NODE_ENV=test)', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rewards-dotenv-'));
    try {
      writeFileSync(join(directory, '.env'), 'PORT=4321\n');
      const child = runIn(directory, { ...required, NODE_ENV: 'test' });
      expect(child.stdout.trim()).toBe(`3000 3001 ${required.DATABASE_URL}`);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('reports a missing DATABASE_URL as required, without a stack', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rewards-dotenv-'));
    try {
      const child = runIn(directory, { REDIS_URL: required.REDIS_URL });
      expect(child.status).toBe(1);
      expect(child.stderr).toMatch(/^\s*DATABASE_URL: required$/m);
      expect(child.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
