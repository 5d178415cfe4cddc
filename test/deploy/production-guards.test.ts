import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError, loadConfig } from '../../src/shared/config/config.js';
import { generateKeyRingText } from '../../src/shared/secrets/key-ring-text.js';
import { seedRefusal } from '../../src/tools/seed/seed-guard.js';

// With NODE_ENV=production the demo seed and WEBHOOK_ALLOW_PRIVATE=true are refused at start, each
// with one sentence naming the setting. No Docker engine runs here, so the compose file is read as
// compose reads it: its seed service, run by the image (NODE_ENV=production, from the Dockerfile),
// must pass the guard, and only because it says so.

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, 'utf8');

const production = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
  REDIS_URL: 'redis://127.0.0.1:1',
  SECRETS_KEYS: generateKeyRingText('k1'),
};

function start(entry: string, env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', entry], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...production, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

/** The environment of a compose service, `${NAME:-default}` read as compose reads it with NAME unset. */
function composeEnvironment(service: string): Record<string, string> {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as {
    services: Record<string, { environment?: Record<string, string> }>;
  };
  const environment = compose.services[service]?.environment ?? {};
  const image = Object.fromEntries(
    [...read('Dockerfile').matchAll(/^ENV\s+([A-Z_]+)=(\S+)/gm)].map((match) => [match[1], match[2]]),
  );
  const resolved = Object.fromEntries(
    Object.entries(environment).map(([name, value]) => [
      name,
      String(value).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, (_all, fallback: string) => fallback),
    ]),
  );
  return { ...image, ...resolved };
}

describe('WEBHOOK_ALLOW_PRIVATE with NODE_ENV=production', () => {
  it('is refused by the configuration, naming the setting', () => {
    expect(() => loadConfig({ ...production, WEBHOOK_ALLOW_PRIVATE: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...production, WEBHOOK_ALLOW_PRIVATE: 'true' })).toThrow(
      /WEBHOOK_ALLOW_PRIVATE: must not be true with NODE_ENV=production/,
    );
    expect(loadConfig({ ...production, WEBHOOK_ALLOW_PRIVATE: 'false' }).WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(
      loadConfig({ ...production, NODE_ENV: 'development', WEBHOOK_ALLOW_PRIVATE: 'true' }).WEBHOOK_ALLOW_PRIVATE,
    ).toBe(true);
  });

  it('stops the worker at start with one line naming it', () => {
    const child = start('src/worker/index.ts', { WEBHOOK_ALLOW_PRIVATE: 'true' });
    expect(child.status).toBe(1);
    expect(child.stderr).toMatch(/^\s*WEBHOOK_ALLOW_PRIVATE: must not be true with NODE_ENV=production/m);
    expect(child.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('the demo seed with NODE_ENV=production', () => {
  it('is refused unless SEED_ALLOWED_IN_PRODUCTION, with one sentence naming it', () => {
    expect(seedRefusal(loadConfig(production))).toMatch(/NODE_ENV=production.*SEED_ALLOWED_IN_PRODUCTION=true/);
    expect(seedRefusal(loadConfig({ ...production, SEED_ALLOWED_IN_PRODUCTION: 'true' }))).toBeNull();
    expect(seedRefusal(loadConfig({ ...production, NODE_ENV: 'development' }))).toBeNull();
  });

  it('stops `npm run seed` before it touches the database', () => {
    const child = start('src/tools/seed/seed.cli.ts', {});
    expect(child.status).toBe(2);
    expect(child.stderr.trim()).toBe(
      "seed: refused with NODE_ENV=production, because the demo merchant's secret is public; " +
        'set SEED_ALLOWED_IN_PRODUCTION=true only for a demo environment.',
    );
  });

  it("passes for docker-compose.yml's seed service, which runs the production image and says it is a demo", () => {
    const seed = composeEnvironment('seed');
    expect(seed.NODE_ENV).toBe('production');
    expect(seedRefusal(loadConfig(seed))).toBeNull();
    // The services of the same file do not carry the opt-in: only the seed does.
    expect(seedRefusal(loadConfig(composeEnvironment('api')))).not.toBeNull();
    expect(composeEnvironment('api').WEBHOOK_ALLOW_PRIVATE).toBeUndefined();
  });
});
