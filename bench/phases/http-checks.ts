import { isDeepStrictEqual } from 'node:util';
import { BET_SLIP_PATH, CANCEL_PATH, READ_ALL_PATH } from '../lib/api-paths.js';
import { MerchantClient } from '../lib/merchant-client.js';
import type { SeededMerchant } from '../lib/seed.js';
import { RAW_BASELINE_PATHS } from '../raw-baseline/paths.js';
import type { BenchContext } from './context.js';

/** The API's answers that the raw baseline and every candidate must match. */
export interface ApiAnswers {
  readAll: string;
  betSlip: string;
}

/**
 * A fast wrong answer is no figure: check once that each route of an API process (`label`: `api`, or
 * a candidate's name) answers what the target describes.
 */
export async function checkApiResponses(
  context: BenchContext,
  label: string,
  apiUrl: string,
  merchant: SeededMerchant,
  token: string,
): Promise<ApiAnswers> {
  const { settings, checks } = context;
  const client = new MerchantClient(apiUrl, merchant);
  const readAll = await client.post(READ_ALL_PATH, {});
  const configurations = readAll.status === 200 ? (JSON.parse(readAll.text) as Array<{ games: unknown[] }>) : [];
  checks.expect(
    `${label} readAll answers ${settings.reads.configurations} configurations × ${settings.reads.gamesPerConfiguration} games`,
    configurations.length === settings.reads.configurations &&
      configurations.every((configuration) => configuration.games.length === settings.reads.gamesPerConfiguration),
    `status ${readAll.status}, ${configurations.length} configurations, ${readAll.text.length} bytes`,
  );
  const betSlip = await client.post(BET_SLIP_PATH, { authToken: token });
  const slip = betSlip.status === 200 ? (JSON.parse(betSlip.text) as { errorCode?: number; betSlip?: unknown[] }) : {};
  checks.expect(
    `${label} /betSlip answers a session of ${settings.reads.betSlipItems} items`,
    slip.errorCode === 0 && slip.betSlip?.length === settings.reads.betSlipItems,
    `status ${betSlip.status}, errorCode ${slip.errorCode}, ${slip.betSlip?.length} items, ${betSlip.text.length} bytes`,
  );
  const cancel = await client.post(CANCEL_PATH, { externalId: `bench-http-check-${label}` });
  checks.expect(
    `${label} cancel answers 200 with a job id`,
    cancel.status === 200 && cancel.headers.get('x-job-id') !== null,
    `status ${cancel.status}`,
  );
  return { readAll: readAll.text, betSlip: betSlip.text };
}

/**
 * A candidate build is compared on the same work: its readAll and /betSlip answers must be the API's
 * (as JSON values: a candidate may order keys or spaces differently, not answer other data).
 */
export async function checkCandidateResponses(
  context: BenchContext,
  name: string,
  candidateUrl: string,
  merchant: SeededMerchant,
  token: string,
  apiAnswers: ApiAnswers,
): Promise<void> {
  const answers = await checkApiResponses(context, `candidate ${name}`, candidateUrl, merchant, token);
  for (const route of ['readAll', 'betSlip'] as const) {
    context.checks.expect(
      `candidate ${name} ${route} answers the API's answer`,
      sameJson(answers[route], apiAnswers[route]),
      `${answers[route].length} bytes (API ${apiAnswers[route].length})`,
    );
  }
}

function sameJson(a: string, b: string): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(a), JSON.parse(b));
  } catch {
    return false;
  }
}

/**
 * The same for the raw baseline: it must really check the signature (a wrong secret answers 401 on
 * every signed route) and really do its work (the job stored, the API's bet slip and readAll answers
 * byte for byte), or its figure would be a floor that is too low.
 */
export async function checkRawResponses(
  context: BenchContext,
  label: 'raw' | 'independent',
  queueName: string,
  rawUrl: string,
  merchant: SeededMerchant,
  token: string,
  apiAnswers: ApiAnswers,
): Promise<void> {
  const { settings, checks, queue } = context;
  const bare = await fetch(`${rawUrl}${RAW_BASELINE_PATHS.bare}`, { method: 'POST', body: '{}' });
  await bare.body?.cancel();
  checks.equal(`${label} bare answers 200`, bare.status, 200);

  const forged = new MerchantClient(rawUrl, { id: merchant.id, secretKey: `${merchant.secretKey}-not` });
  for (const [path, fields] of [
    [RAW_BASELINE_PATHS.cancel, { externalId: `${label}-http-forged` }],
    [RAW_BASELINE_PATHS.betSlip, { authToken: token }],
    [RAW_BASELINE_PATHS.readAll, {}],
  ] as const) {
    checks.equal(`${label} ${path} answers 401 to a wrong signature`, (await forged.post(path, fields)).status, 401);
  }

  const client = new MerchantClient(rawUrl, merchant);
  const cancel = await client.post(RAW_BASELINE_PATHS.cancel, { externalId: `${label}-http-check` });
  const jobId = cancel.headers.get('x-job-id');
  checks.expect(
    `${label} cancel answers 200 with the id of a job it stored`,
    cancel.status === 200 && jobId !== null && jobId !== '' && (await queue.hasJob(queueName, jobId)),
    `status ${cancel.status}, job id ${jobId}`,
  );

  const betSlip = await client.post(RAW_BASELINE_PATHS.betSlip, { authToken: token });
  const slip = betSlip.status === 200 ? (JSON.parse(betSlip.text) as { betSlip?: unknown[] }) : {};
  checks.expect(
    `${label} bet slip answers the API's answer for its session of ${settings.reads.betSlipItems} items`,
    betSlip.status === 200 && betSlip.text === apiAnswers.betSlip,
    `status ${betSlip.status}, ${slip.betSlip?.length} items, ${betSlip.text.length} bytes (API ${apiAnswers.betSlip.length})`,
  );

  const readAll = await client.post(RAW_BASELINE_PATHS.readAll, {});
  checks.expect(
    `${label} readAll answers the API's readAll answer`,
    readAll.status === 200 && readAll.text === apiAnswers.readAll,
    `status ${readAll.status}, ${readAll.text.length} bytes (API ${apiAnswers.readAll.length})`,
  );
}
