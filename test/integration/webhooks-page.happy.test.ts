import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedDemo } from '../../src/tools/seed/demo-seed.js';
import { testKeyRing } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

// docs/webhooks.md runs as written: its curl, TypeScript and Python examples, against the demo merchant,
// with only the service's address and the endpoint's URL (a real receiver on 127.0.0.1) put in.

const execute = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const ENDPOINT = 'https://merchant.example/webhooks/rewards';

const { env, api } = useTestContext({ settings: { WEBHOOK_ALLOW_PRIVATE: 'true' }, api: true, worker: true });
let receiver: WebhookReceiver;
let directory: string;
let page: string;

const block = (language: string) => {
  const source = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(page)?.[1];
  expect(source, `a ${language} block`).toBeDefined();
  return source as string;
};

/** The test event's id printed by an example, once the receiver has it. */
async function receivedTestEvent(path: string, eventId: string) {
  const request = await eventually(async () => receiver.withId(eventId)[0], { what: `test event ${eventId}` });
  expect(request.path).toBe(path);
  expect(JSON.parse(request.body)).toMatchObject({ type: 'webhook.test' });
}

beforeAll(async () => {
  await seedDemo(env.db, testKeyRing());
  receiver = await startWebhookReceiver();
  directory = await mkdtemp(join(tmpdir(), 'webhooks-page-'));
  page = await readFile(join(root, 'docs/webhooks.md'), 'utf8');
});
afterAll(async () => {
  await receiver?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});
beforeEach(() => {
  receiver.answer = () => 200;
});

describe('docs/webhooks.md', () => {
  it('the curl example sets the endpoint, rotates, sends a test event, lists and recovers', async () => {
    const script = block('bash')
      .replace('localhost:3000', api.baseUrl.replace('http://', ''))
      .replace(ENDPOINT, `${receiver.url}/curl`);
    const { stdout } = await execute('bash', ['-c', script], { cwd: root, timeout: 60_000 });
    const [put, rotated, test, deliveries, recovered] = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(put).toMatchObject({ url: `${receiver.url}/curl`, secret: expect.stringMatching(/^whsec_/) });
    expect(rotated).toMatchObject({ secret: expect.stringMatching(/^whsec_/) });
    expect(deliveries).toEqual({ deliveries: [], next: null });
    expect(recovered).toMatchObject({ events: 0 });
    await receivedTestEvent('/curl', test.eventId);
  });

  it('the TypeScript example does the same with the client', async () => {
    const program = block('ts')
      .replace("'http://localhost:3000'", JSON.stringify(api.baseUrl))
      .replace(`'${ENDPOINT}'`, JSON.stringify(`${receiver.url}/ts`))
      .replace("'./clients/typescript/src/index.js'", JSON.stringify(join(root, 'clients/typescript/src/index.js')));
    const file = join(root, `.generated/webhooks-page-${process.pid}.ts`);
    await execute('mkdir', ['-p', join(root, '.generated')]);
    await writeFile(file, program);
    try {
      const { stdout } = await execute(process.execPath, ['--import', 'tsx', file], { cwd: root, timeout: 60_000 });
      const lines = stdout.trim().split('\n');
      expect(lines[0]).toBe(`endpoint ${receiver.url}/ts true`);
      const eventId = /^test event (msg_\S+)$/.exec(lines[1] ?? '')?.[1] ?? '';
      expect(lines.at(-1)).toBe('recovering 0');
      await receivedTestEvent('/ts', eventId);
    } finally {
      await rm(file, { force: true });
    }
  });

  it('the Python example does the same with the client', async () => {
    const program = block('python')
      .replace('"http://localhost:3000"', JSON.stringify(api.baseUrl))
      .replace(`"${ENDPOINT}"`, JSON.stringify(`${receiver.url}/py`));
    await writeFile(join(directory, 'webhooks.py'), program);
    const { stdout } = await execute('python3', [join(directory, 'webhooks.py')], {
      cwd: join(root, 'clients/python'),
      timeout: 60_000,
      // As if saved in clients/python, as the page says: the package is found beside the script.
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH: join(root, 'clients/python') },
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe(`endpoint ${receiver.url}/py True`);
    const eventId = /^test event (msg_\S+)$/.exec(lines[1] ?? '')?.[1] ?? '';
    expect(lines.at(-1)).toBe('recovering 0');
    await receivedTestEvent('/py', eventId);
  });
});
