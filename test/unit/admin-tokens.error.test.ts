import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { adminOperators, loadConfig } from '../../src/shared/config/config.js';

const required = { DATABASE_URL: 'postgres://localhost/rewards', REDIS_URL: 'redis://localhost:6379' };
const root = fileURLToPath(new URL('../..', import.meta.url));
const strong = 'a3f1c9e07b5d24681f0e9c8b7a6d5e4f3c2b1a09';

/** The admin token placeholders the repository itself ships, read from the files, so that none can slip back. */
function shippedPlaceholders(): string[] {
  const secretExample = readFileSync(`${root}/deploy/kubernetes/secret.example.yaml`, 'utf8');
  const tokens = /^\s*ADMIN_TOKENS:\s*(\S+)\s*$/m.exec(secretExample)?.[1];
  expect(tokens).toBeDefined();
  return [
    // The example of earlier versions, still in copies of it.
    'change-me-to-at-least-16-characters',
    'dev-only-admin-token-change-me',
    ...(tokens as string).split(',').map((entry) => entry.slice(entry.indexOf(':') + 1)),
  ];
}

function configError(env: Record<string, string>): string {
  try {
    loadConfig({ ...required, ...env });
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
}

describe('admin tokens refused at start', () => {
  it('refuses every placeholder the repository ships, as ADMIN_TOKEN and in ADMIN_TOKENS', () => {
    const placeholders = shippedPlaceholders();
    expect(placeholders.length).toBeGreaterThanOrEqual(3);
    for (const placeholder of placeholders) {
      expect(configError({ ADMIN_TOKEN: placeholder }), placeholder).toMatch(/ADMIN_TOKEN: .*placeholder|at least 32/);
      expect(configError({ ADMIN_TOKENS: `ops:${placeholder}` }), placeholder).toMatch(/^\s*ADMIN_TOKENS: /m);
    }
  });

  it('refuses a long placeholder with a message saying so, never quoting the token', () => {
    const placeholder = 'change-me-please-this-is-long-enough-0123456789';
    const message = configError({ ADMIN_TOKEN: placeholder });
    expect(message).toMatch(/ADMIN_TOKEN: is a placeholder from an example/);
    expect(message).not.toContain(placeholder);
  });

  it('refuses any token shorter than 32 characters', () => {
    expect(configError({ ADMIN_TOKEN: strong.slice(0, 31) })).toMatch(/ADMIN_TOKEN: must be at least 32 characters/);
    expect(configError({ ADMIN_TOKENS: `alice:${strong.slice(0, 31)}` })).toMatch(
      /ADMIN_TOKENS: the token of "alice" must be at least 32 characters/,
    );
    expect(loadConfig({ ...required, ADMIN_TOKEN: strong.slice(0, 32) }).ADMIN_TOKEN).toBe(strong.slice(0, 32));
  });

  it('refuses malformed ADMIN_TOKENS entries and an operator named twice', () => {
    expect(configError({ ADMIN_TOKENS: strong })).toMatch(/entry 1 must be name:token/);
    expect(configError({ ADMIN_TOKENS: `:${strong}` })).toMatch(/entry 1 must be name:token/);
    expect(configError({ ADMIN_TOKENS: `a b:${strong}` })).toMatch(/entry 1 must be name:token/);
    expect(configError({ ADMIN_TOKENS: `alice:${strong},alice:${strong}0` })).toMatch(/"alice" is named twice/);
    expect(configError({ ADMIN_TOKENS: `admin:${strong}`, ADMIN_TOKEN: `${strong}0` })).toMatch(
      /ADMIN_TOKEN: ADMIN_TOKENS already names an operator "admin"/,
    );
  });

  it('refuses an ADMIN_PORT equal to PORT', () => {
    expect(configError({ PORT: '4000', ADMIN_PORT: '4000' })).toMatch(/ADMIN_PORT: must differ from PORT/);
  });

  it('stops the API process with status 1 and the variable named, before listening', () => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'src/api/index.ts'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        ...required,
        SECRETS_KEYS: 'k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
        ADMIN_TOKEN: 'change-me-to-at-least-16-characters',
        PORT: '0',
        ADMIN_PORT: '0',
      },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(child.status).toBe(1);
    expect(child.stderr).toMatch(/^\s*ADMIN_TOKEN: is a placeholder from an example/m);
    expect(child.stderr).not.toMatch(/\n\s+at /);
    expect(child.stdout).not.toContain('listening');
  });
});

describe('admin operators', () => {
  it('are ADMIN_TOKEN as "admin", then every ADMIN_TOKENS entry; none while both are unset', () => {
    const config = loadConfig({
      ...required,
      ADMIN_TOKEN: strong,
      ADMIN_TOKENS: ` alice:${strong}1 , bob:${strong}2 `,
    });
    expect(adminOperators(config)).toEqual([
      { name: 'admin', token: strong },
      { name: 'alice', token: `${strong}1` },
      { name: 'bob', token: `${strong}2` },
    ]);
    expect(adminOperators(loadConfig(required))).toEqual([]);
    expect(adminOperators(loadConfig({ ...required, ADMIN_TOKEN: '', ADMIN_TOKENS: '' }))).toEqual([]);
  });
});
