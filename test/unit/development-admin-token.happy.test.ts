import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminOperators, loadConfig } from '../../src/shared/config/config.js';
import { developmentAdminToken } from '../../src/tools/development-admin-token.js';
import { renderBanner } from '../../src/tools/local-banner.js';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('the development admin token (npm start)', () => {
  it('is made once, kept in its file (owner only) and the same on every later start', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rewards-admin-token-'));
    directories.push(directory);
    const file = join(directory, '.admin-token.dev');
    const first = developmentAdminToken(file);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(file, 'utf8').trim()).toBe(first);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(developmentAdminToken(file)).toBe(first);
    // A token the start-up check accepts, as operator "admin".
    const config = loadConfig({
      DATABASE_URL: 'postgres://localhost/r',
      REDIS_URL: 'redis://localhost',
      ADMIN_TOKEN: first,
    });
    expect(adminOperators(config)).toEqual([{ name: 'admin', token: first }]);
  });

  it('is printed with the admin listener, where the dashboard and metrics are', () => {
    const banner = renderBanner({
      apiBaseUrl: 'http://localhost:3000',
      adminBaseUrl: 'http://localhost:3002',
      workerBaseUrl: 'http://localhost:3001',
      adminToken: 'f'.repeat(64),
      adminTokenFile: '.admin-token.dev',
      signatureWindowMs: 300_000,
      now: 1_763_679_600_000,
    });
    expect(banner).toContain(`${'f'.repeat(64)}  (operator "admin", kept in .admin-token.dev`);
    expect(banner).toContain('http://localhost:3002/admin/queues');
    expect(banner).toContain('http://localhost:3002/metrics');
    expect(banner).not.toContain('http://localhost:3000/admin');
  });
});
