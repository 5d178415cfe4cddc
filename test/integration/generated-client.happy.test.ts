import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * A client generated from openapi/merchant.json by off-the-shelf tools
 * (openapi-typescript for the types, openapi-fetch for the calls) compiles under `tsc --strict` and,
 * against a running service, reads configurations, cancels, waits for the job and lists its rewards.
 * Nothing here is hand-typed: a route whose document lies about its answer breaks the compile or the run.
 */

const execute = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
// Inside the project, so that the program resolves openapi-fetch from its node_modules; ignored by git.
const directory = `${root}.generated/client-${process.pid}`;

const { env, api } = useTestContext({ api: true, worker: true });
let merchant: MerchantFixture;

const program = `
import { createHmac } from 'node:crypto';
import createClient from 'openapi-fetch';
import type { paths } from './merchant-api.js';

const [baseUrl, merchantId, secret, ...externalIds] = process.argv.slice(2) as [string, string, string, ...string[]];
const client = createClient<paths>({ baseUrl });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
function signed() {
  const timestamp = Date.now();
  return { merchantId, timestamp, hash: createHmac('sha256', secret).update(merchantId + timestamp).digest('hex') };
}

const configurations = await client.POST('/api/v1/integration/reward-configurations/readAll', { body: signed() });
if (!configurations.data) throw new Error('readAll: ' + JSON.stringify(configurations.error));

const cancel = await client.POST('/api/v1/integration/rewards/bulkCancel', {
  body: { ...signed(), externalIds },
  params: { header: { 'idempotency-key': 'generated-client-' + externalIds[0] } },
});
// The interface's answer, as the document declares it: an empty 200, the job id in X-Job-Id.
if (cancel.error || cancel.data !== undefined) throw new Error('bulkCancel: ' + JSON.stringify(cancel.error ?? cancel.data));
const jobId = cancel.response.headers.get('x-job-id');
if (!jobId) throw new Error('bulkCancel: no X-Job-Id');

let state = '';
let result: Record<string, number> | null = null;
for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(100)) {
  const status = await client.POST('/api/v1/integration/jobs/status', { body: { ...signed(), jobId } });
  if (!status.data) throw new Error('jobs/status: ' + JSON.stringify(status.error));
  state = status.data.state;
  result = status.data.result;
  if (state === 'completed' || state === 'failed') break;
}

const rewards: Array<string | null> = [];
let after: string | undefined;
for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
  const page = await client.POST('/api/v1/integration/jobs/rewards', {
    body: { ...signed(), jobId, limit: 2, ...(after === undefined ? {} : { after }) },
  });
  if (page.response.status === 409) {
    await sleep(Number(page.response.headers.get('retry-after') ?? 1) * 1000);
    continue;
  }
  if (!page.data) throw new Error('jobs/rewards: ' + JSON.stringify(page.error));
  rewards.push(...page.data.rewards.map((reward) => reward.externalId));
  if (page.data.next === null) break;
  after = page.data.next;
}

console.log(JSON.stringify({ configurations: configurations.data.map((each) => each.id), jobId, state, result, rewards }));
`;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  mkdirSync(directory, { recursive: true });
});
afterAll(async () => {
  rmSync(directory, { recursive: true, force: true });
});

describe('a client generated from openapi/merchant.json', () => {
  it('compiles under tsc --strict and reads, cancels, waits for the job and lists its rewards', async () => {
    const types = astToString(await openapiTS(new URL('../../openapi/merchant.json', import.meta.url)));
    writeFileSync(`${directory}/merchant-api.ts`, types);
    writeFileSync(`${directory}/client.ts`, program);

    const tsc = `${root}node_modules/typescript/bin/tsc`;
    const flags = ['--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext'];
    await execute(
      process.execPath,
      [tsc, ...flags, '--target', 'es2022', '--types', 'node', `${directory}/client.ts`],
      {
        timeout: 120_000,
      },
    );

    const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
    const externalIds = ['generated-1', 'generated-2', 'generated-3'];
    await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configuration.id,
      rewards: externalIds.map((externalId) => ({ playerId: 'generated-player', externalId })),
    });
    const { stdout } = await execute(
      process.execPath,
      [
        '--import',
        'tsx',
        `${directory}/client.ts`,
        api.baseUrl,
        merchant.id,
        merchant.secretKey,
        ...externalIds,
        'generated-none',
      ],
      { cwd: root, timeout: 60_000 },
    );
    const output = JSON.parse(stdout) as {
      configurations: string[];
      jobId: string;
      state: string;
      result: Record<string, number>;
      rewards: string[];
    };
    expect(output.configurations).toEqual([configuration.id]);
    expect(output.state).toBe('completed');
    expect(output.result).toEqual({ requested: 4, cancelled: 3, alreadyCancelled: 0, notCancellable: 0, notFound: 1 });
    expect(output.rewards.sort()).toEqual(externalIds);
  });
});
