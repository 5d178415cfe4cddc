import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_MERCHANT } from '../../src/tools/seed/demo-data.js';
import { seedDemo } from '../../src/tools/seed/demo-seed.js';
import { testKeyRing } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

// docs/quickstart-python.md must run as written: its two Python blocks are saved as files and run against
// the service on the demo data, and the first one's output must be the one the page shows.

const run = promisify(execFile);
const repositoryFile = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

const { env, api } = useTestContext({ settings: { WEBHOOK_ALLOW_PRIVATE: 'true' }, api: true, worker: true });
let directory: string;
let blocks: { python: string[]; text: string[] };

beforeAll(async () => {
  await seedDemo(env.db, testKeyRing());
  directory = await mkdtemp(join(tmpdir(), 'python-quickstart-'));
  const page = await readFile(repositoryFile('docs/quickstart-python.md'), 'utf8');
  const fenced = (language: string) =>
    [...page.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((match) => match[1] ?? '');
  blocks = { python: fenced('python'), text: fenced('text') };
});
afterAll(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});

const pythonEnv = (extra: Record<string, string>) => ({
  ...process.env,
  PYTHONDONTWRITEBYTECODE: '1',
  PYTHONPATH: repositoryFile('clients/python'),
  ...extra,
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function setWebhook(url: string): Promise<string> {
  const response = await fetch(`${api.adminUrl}/admin/v1/merchants/${DEMO_MERCHANT.id}/webhook`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { secret: string }).secret;
}

describe('docs/quickstart-python.md', () => {
  it('has the two scripts and the output it promises', () => {
    expect(blocks.python).toHaveLength(2);
    expect(blocks.text).toHaveLength(1);
  });

  it('quickstart.py prints what the page shows', async () => {
    const script = join(directory, 'quickstart.py');
    await writeFile(script, blocks.python[0] ?? '');
    const { stdout } = await run('python3', [script], {
      cwd: directory,
      env: pythonEnv({ REWARDS_BASE_URL: api.baseUrl }),
      timeout: 60_000,
    });
    expect(stdout).toBe(blocks.text[0]);
  });

  it('webhook_receiver.py verifies an event of a finished job and refuses a forged one', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hooks`;
    const previous = await setWebhook(url);
    const current = await setWebhook(url);
    const script = join(directory, 'webhook_receiver.py');
    await writeFile(script, blocks.python[1] ?? '');
    let output = '';
    const receiver: ChildProcess = spawn('python3', [script], {
      cwd: directory,
      env: pythonEnv({ WEBHOOK_SECRETS: `${current},${previous}`, PORT: String(port) }),
    });
    receiver.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      await eventually(async () => (output.includes(`listening on port ${port}`) ? true : undefined), {
        what: 'the receiver to listen',
      });
      const forged = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': 'msg_forged',
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
        },
        body: '{"type":"job.completed","data":{}}',
      });
      expect(forged.status).toBe(400);

      const { stdout } = await run('python3', ['-c', CANCEL_ONE], {
        env: pythonEnv({ REWARDS_BASE_URL: api.baseUrl }),
        timeout: 30_000,
      });
      const jobId = stdout.trim();
      const line = await eventually(
        async () => output.split('\n').find((entry) => entry.startsWith(`verified: job.completed ${jobId}`)),
        { what: 'the verified event' },
      );
      expect(line).toContain("'cancelled': 1");
      expect(output).toContain('refused: no signature matches the given secrets');
    } finally {
      receiver.kill('SIGTERM');
    }
  });
});

/** One cancel with the client, printing its job id. */
const CANCEL_ONE = `
import os
from rewards_gateway import RewardsClient
client = RewardsClient(os.environ["REWARDS_BASE_URL"], "${DEMO_MERCHANT.id}", "${DEMO_MERCHANT.secretKey}")
print(client.cancel(external_id="demo-reward-1"))
`;
