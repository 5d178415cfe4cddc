import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CONFIGURATIONS, DEMO_MERCHANT } from '../../src/tools/seed/demo-data.js';
import { seedDemo } from '../../src/tools/seed/demo-seed.js';
import { buildSignedFields } from '../../src/tools/signed-request.js';
import { testKeyRing } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

// The integration kit in examples/ must work as written against the real API: each signs with its
// own standard library only, calls readAll and cancel, and prints what it got.

const run = promisify(execFile);
const examplePath = (name: string) => fileURLToPath(new URL(`../../examples/${name}`, import.meta.url));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const { env, api } = useTestContext({ api: true });

beforeAll(async () => {
  await seedDemo(env.db, testKeyRing());
});

/** Switches the demo merchant's signature version, seen at once by the API (its cache entry dropped). */
async function setSignatureVersion(version: 1 | 2): Promise<void> {
  await env.db
    .updateTable('merchants')
    .set({ signature_version: version })
    .where('id', '=', DEMO_MERCHANT.id)
    .execute();
  api.deps.merchants.forget(DEMO_MERCHANT.id);
}

interface ExampleOutput {
  vector: string;
  readAllStatus: number;
  configurations: Array<{ id: string; merchantId: string }>;
  cancelStatus: number;
  jobId: string;
}

function parseOutput(stdout: string): ExampleOutput {
  const lines = stdout.trimEnd().split('\n');
  // Four lines: the cancel's 200 is the interface's, with an empty body, which the examples do not print.
  expect(lines).toHaveLength(4);
  const [vector, readAll, body, cancel] = lines as [string, string, string, string];
  const cancelMatch = /^cancel: HTTP (\d+) X-Job-Id: (\S+)$/.exec(cancel);
  return {
    vector,
    readAllStatus: Number(/^readAll: HTTP (\d+)$/.exec(readAll)?.[1]),
    configurations: JSON.parse(body),
    cancelStatus: Number(cancelMatch?.[1]),
    jobId: cancelMatch?.[2] ?? '',
  };
}

describe.each([
  ['sign.py', 'python3', 'demo-reward-1'],
  ['sign.mjs', process.execPath, 'demo-reward-2'],
])('examples/%s', (file, interpreter, externalId) => {
  it('checks the test vector, reads the configurations and queues a cancel', async () => {
    const { stdout } = await run(
      interpreter,
      [examplePath(file), '--base-url', api.baseUrl, '--external-id', externalId],
      {
        timeout: 20_000,
      },
    );
    const output = parseOutput(stdout);
    expect(output.vector).toBe('signature test vector: ok');
    expect(output.readAllStatus).toBe(200);
    expect(output.configurations.map((configuration) => configuration.id).sort()).toEqual(
      DEMO_CONFIGURATIONS.map((configuration) => configuration.id).sort(),
    );
    expect(output.configurations.every((configuration) => configuration.merchantId === DEMO_MERCHANT.id)).toBe(true);
    expect(output.cancelStatus).toBe(200);
    expect(output.jobId).toMatch(UUID);
    // The job id printed is one the service stored for this merchant.
    const status = await api.post(
      '/api/v1/integration/jobs/status',
      buildSignedFields(DEMO_MERCHANT.id, DEMO_MERCHANT.secretKey, Date.now(), { jobId: output.jobId }),
    );
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ jobId: output.jobId, operation: 'cancel' });
  });

  it('with --v2, sends X-Signature: served while the merchant is on version 2, refused without the flag', async () => {
    await setSignatureVersion(2);
    try {
      const v2 = parseOutput(
        (
          await run(interpreter, [examplePath(file), '--base-url', api.baseUrl, '--v2', '--external-id', externalId], {
            timeout: 20_000,
          })
        ).stdout,
      );
      expect(v2.vector).toBe('signature test vector: ok');
      expect(v2.readAllStatus).toBe(200);
      expect(v2.configurations.length).toBe(DEMO_CONFIGURATIONS.length);
      expect(v2.cancelStatus).toBe(200);
      expect(v2.jobId).toMatch(UUID);

      const { stdout } = await run(interpreter, [examplePath(file), '--base-url', api.baseUrl], { timeout: 20_000 });
      const lines = stdout.trimEnd().split('\n');
      expect(lines[1]).toBe('readAll: HTTP 401');
      expect(JSON.parse(lines[2] ?? '')).toMatchObject({ errorCode: 2 });
      expect(lines[3]).toBe('cancel: HTTP 401 X-Job-Id: -');
    } finally {
      await setSignatureVersion(1);
    }
  });

  it('prints the 401 answer when the secret is wrong', async () => {
    const { stdout } = await run(
      interpreter,
      [examplePath(file), '--base-url', api.baseUrl, '--secret', 'wrong-secret-0123456789'],
      {
        timeout: 20_000,
      },
    );
    const lines = stdout.trimEnd().split('\n');
    expect(lines[1]).toBe('readAll: HTTP 401');
    expect(JSON.parse(lines[2] ?? '')).toMatchObject({ errorCode: 2 });
    expect(lines[3]).toBe('cancel: HTTP 401 X-Job-Id: -');
  });
});
