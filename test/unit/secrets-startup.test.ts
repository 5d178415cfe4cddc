import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every process of a deployment refuses to start without a usable key ring: the real entry points,
 * started as processes with NODE_ENV=production. They stop at the configuration, before touching
 * Postgres or Redis (none is needed here: the addresses below answer nothing).
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const base = {
  PATH: process.env.PATH ?? '',
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
  REDIS_URL: 'redis://127.0.0.1:1',
};

function start(entry: string, env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', entry], {
    cwd: root,
    env: { ...base, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('start-up without a usable key ring', () => {
  it.each([
    ['the API', 'src/api/index.ts'],
    ['the worker', 'src/worker/index.ts'],
    ['migrate', 'src/tools/migrate.cli.ts'],
    ['secrets:reseal', 'src/tools/reseal-secrets.cli.ts'],
  ])('%s refuses to start in production without SECRETS_KEYS, naming the variable', (_name, entry) => {
    const child = start(entry, {});
    expect(child.status).toBe(1);
    expect(child.stderr).toMatch(/^\s*SECRETS_KEYS: required with NODE_ENV=production/m);
    expect(child.stderr).not.toMatch(/\n\s+at /);
  });

  it.each([
    [
      'a key of the wrong length',
      `k1:${randomBytes(16).toString('base64')}`,
      /key 1 \("k1"\): the key is 16 bytes, must be 32/,
    ],
    ['a key that is not base64', 'k1:%%%not-base64%%%', /key 1 \("k1"\): the key is not base64/],
    [
      'a kid used twice',
      `k1:${randomBytes(32).toString('base64')},k1:${randomBytes(32).toString('base64')}`,
      /key 2 \("k1"\): kid used twice/,
    ],
    ['no kid', randomBytes(32).toString('base64'), /key 1: must be kid:base64key/],
  ])('the API refuses %s with a clear message', (_what, ring, message) => {
    const child = start('src/api/index.ts', { SECRETS_KEYS: ring });
    expect(child.status).toBe(1);
    expect(child.stderr).toMatch(/SECRETS_KEYS: /);
    expect(child.stderr).toMatch(message);
    expect(child.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('the development ring', () => {
  const configModule = fileURLToPath(new URL('../../src/shared/config/config.ts', import.meta.url));
  const tsxLoader = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
  const printKids = `import(${JSON.stringify(configModule)}).then((m) => { const c = m.loadConfigOrExit(); console.log(c.SECRETS_KEYS.map((k) => k.kid + ':' + k.key.toString('base64')).join(',')); })`;

  function runIn(directory: string, env: Record<string, string>) {
    return spawnSync(process.execPath, ['--import', tsxLoader, '-e', printKids], {
      cwd: directory,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: base.DATABASE_URL, REDIS_URL: base.REDIS_URL, ...env },
      encoding: 'utf8',
      timeout: 20_000,
    });
  }

  it('is made once in .secrets-keys.dev and kept across restarts', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rewards-dev-ring-'));
    try {
      const first = runIn(directory, {});
      expect(first.status).toBe(0);
      const file = join(directory, '.secrets-keys.dev');
      expect(readFileSync(file, 'utf8').trim()).toBe(first.stdout.trim());
      // Readable by its owner only.
      expect(statSync(file).mode & 0o077).toBe(0);
      const second = runIn(directory, {});
      expect(second.stdout.trim()).toBe(first.stdout.trim());
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('is never made in production, nor when SECRETS_KEYS is set', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rewards-dev-ring-'));
    try {
      expect(runIn(directory, { NODE_ENV: 'production' }).status).toBe(1);
      const ring = `given:${randomBytes(32).toString('base64')}`;
      expect(runIn(directory, { SECRETS_KEYS: ring }).stdout.trim()).toBe(ring);
      expect(existsSync(join(directory, '.secrets-keys.dev'))).toBe(false);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
