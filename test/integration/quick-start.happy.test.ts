import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../../src/tools/seed/demo-seed.js';
import { testKeyRing } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

/** docs/quick-start-typescript.md runs as written against the demo data (only the address differs). */

const execute = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const directory = `${root}.generated/quick-start-${process.pid}`;

const { env, api } = useTestContext({ api: true, worker: true });

beforeAll(async () => {
  await seedDemo(env.db, testKeyRing());
  mkdirSync(directory, { recursive: true });
});
afterAll(async () => {
  rmSync(directory, { recursive: true, force: true });
});

describe('docs/quick-start-typescript.md', () => {
  it('reads, cancels, waits, lists the rewards and the jobs of the demo merchant', async () => {
    const page = readFileSync(new URL('../../docs/quick-start-typescript.md', import.meta.url), 'utf8');
    const source = /```ts\n([\s\S]*?)```/.exec(page)?.[1];
    expect(source).toContain("baseUrl: 'http://localhost:3000'");
    const program = (source as string)
      .replace("'http://localhost:3000'", JSON.stringify(api.baseUrl))
      .replace("'./clients/typescript/src/index.js'", "'../../clients/typescript/src/index.js'");
    writeFileSync(`${directory}/quick-start.ts`, program);
    const { stdout } = await execute(process.execPath, ['--import', 'tsx', `${directory}/quick-start.ts`], {
      cwd: root,
      timeout: 60_000,
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toContain('Weekend Boost');
    expect(stdout).toMatch(/completed \{[^}]*requested: 3,[^}]*cancelled: 2,[^}]*notFound: 1/);
    expect(lines.filter((line) => line.startsWith('cancelled ')).sort()).toEqual([
      'cancelled demo-reward-1',
      'cancelled demo-reward-2',
    ]);
    expect(lines.at(-1)).toMatch(/^[0-9a-f-]{36} bulkCancel$/);
  });
});
