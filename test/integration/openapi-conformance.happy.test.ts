import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { signMessage } from '../../src/api/auth/signature.js';
import { buildMerchantDocument } from '../../src/api/operations/openapi-documents.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { type Schema, SchemaSet } from '../helpers/json-schema-arbitrary.js';
import { describeMutation, invalidMutations, validBoundaries } from '../helpers/json-schema-mutations.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * What openapi/merchant.json says, checked against the service from outside: for every merchant
 * operation with a JSON body, bodies generated from the document's own request schema are accepted
 * (never 400), and the same bodies with one field taken out of its schema are refused as the document
 * says (400 errorCode 1; a hash outside its pattern, 401 errorCode 2 as its description says). Every
 * answer's status is one the operation declares, with a declared media type (an empty body: a
 * response declared without content).
 */

type DeclaredResponse = {
  description: string;
  content?: Record<string, unknown>;
  /** The bodies a request asks for (the cancels' 200 is empty unless a dry run or a `Prefer` asks). */
  'x-content-on-request'?: Array<{ when: string; content: Record<string, unknown> }>;
};
type Operation = {
  operationId: string;
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, DeclaredResponse>;
};

const document = buildMerchantDocument() as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};
const schemas = new SchemaSet(document.components.schemas);

const jsonOperations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).flatMap(([method, operation]) => {
    const schema = operation.requestBody?.content['application/json']?.schema;
    return schema ? [{ path, method, operation, schema }] : [];
  }),
);

const { env, api } = useTestContext({ api: true });
let merchant: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
});

/**
 * The generated body, signed now by the test merchant. The signed fields the generator made are
 * replaced; a generated string timestamp is sent as a string (16 digits, leading zeros: also valid).
 */
function signed(generated: Record<string, unknown>): Record<string, unknown> {
  const { merchantId: _m, timestamp, hash: _h, ...fields } = generated;
  if (typeof timestamp !== 'string') return signedBody(merchant, fields);
  const digits = String(Date.now()).padStart(16, '0');
  return {
    ...fields,
    merchantId: merchant.id,
    timestamp: digits,
    hash: signMessage(merchant.id, digits, merchant.secretKey),
  };
}

interface Answer {
  status: number;
  text: string;
  contentType: string | null;
  /** The body sent. */
  request: unknown;
}

async function send(path: string, body: unknown): Promise<Answer> {
  const response = await api.post(path, body);
  return {
    status: response.status,
    text: await response.text(),
    contentType: response.headers.get('content-type'),
    request: body,
  };
}

/**
 * What is wrong with the answer, if anything: a status the operation does not declare, a media type
 * its response does not declare (an empty body must be a response declared without content), JSON
 * that does not parse.
 */
function undeclared(operation: Operation, answer: Answer): string | null {
  const declared = operation.responses[String(answer.status)];
  if (!declared) return `status ${answer.status} not declared`;
  const mediaTypes = Object.keys(declared.content ?? {});
  if (answer.text === '') return mediaTypes.length === 0 ? null : `empty ${answer.status}, declared as ${mediaTypes}`;
  const mediaType = answer.contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  const asked = (declared['x-content-on-request'] ?? []).filter(
    // These requests never send `Prefer`: a dry run is the one body they can ask for.
    ({ when }) => when === 'dryRun: true' && (answer.request as { dryRun?: unknown }).dryRun === true,
  );
  mediaTypes.push(...asked.flatMap(({ content }) => Object.keys(content)));
  if (!mediaTypes.includes(mediaType)) return `${answer.status} sent as ${mediaType}, declared as ${mediaTypes}`;
  if (mediaType === 'application/json') {
    try {
      JSON.parse(answer.text);
    } catch {
      return `${answer.status}: not JSON`;
    }
  }
  return null;
}

/** Declared, and one of the statuses a request the document calls valid may get. */
function notAccepted(operation: Operation, answer: Answer): string | null {
  // 404: no such job; 409: the job finished or is being listed. Never a refusal of the request.
  const accepted = [200, 404, 409].includes(answer.status) ? null : `${answer.status} ${answer.text.slice(0, 160)}`;
  return undeclared(operation, answer) ?? accepted;
}

const errorCodeOf = (answer: Answer) => (JSON.parse(answer.text) as { errorCode?: number }).errorCode;

describe('requests generated from openapi/merchant.json are accepted or refused exactly as it says', () => {
  it('covers every merchant operation with a JSON body', () => {
    expect(jsonOperations.map(({ operation }) => operation.operationId).sort()).toEqual([
      'abortJob',
      'bulkCancel',
      'bulkCancelByQuery',
      'cancelReward',
      'deleteWebhook',
      'getJobReport',
      'getJobStatus',
      'getWebhook',
      'listJobRewards',
      'listJobUnapplied',
      'listJobs',
      'listWebhookDeliveries',
      'postBetSlip',
      'putWebhook',
      'readAllRewardConfigurations',
      'recoverWebhookEvents',
      'redeliverWebhookEvent',
      'rotateWebhookSecret',
      'sendWebhookTestEvent',
    ]);
  });

  it.each(jsonOperations.map((entry) => [entry.operation.operationId, entry] as const))(
    '%s: generated valid bodies are accepted (200, or a declared business answer), never 400',
    async (_, { path, operation, schema }) => {
      await fc.assert(
        fc.asyncProperty(schemas.arbitrary(schema), async (generated) => {
          const body = signed(generated as Record<string, unknown>);
          expect(schemas.matches(schema, body), 'the signed body is still valid').toBe(true);
          const answer = await send(path, body);
          expect(notAccepted(operation, answer), JSON.stringify(body).slice(0, 300)).toBeNull();
        }),
        { seed: 40, numRuns: 20 },
      );
    },
  );

  it.each(jsonOperations.map((entry) => [entry.operation.operationId, entry] as const))(
    '%s: each field at the edges of its schema (longest in emoji, largest, NUL where allowed) is accepted',
    async (_, { path, operation, schema }) => {
      const [valid] = fc.sample(schemas.arbitrary(schema), { numRuns: 1, seed: 40 });
      const edges = validBoundaries(schemas, schema, valid as Record<string, unknown>, [
        'merchantId',
        'timestamp',
        'hash',
      ]);
      // Fields with edges: plain strings, integers, nullable ones. An operation whose other fields are all
      // formats, enums or lists (webhooks/put, webhooks/redeliver) or that has none (webhooks/get) has none.
      const withEdges = Object.entries(schemas.resolve(schema).properties ?? {}).filter(
        ([name, property]) =>
          !['merchantId', 'timestamp', 'hash'].includes(name) &&
          validBoundaries(schemas, { type: 'object', properties: { [name]: property } }, {}).length > 0,
      );
      expect(edges.length > 0).toBe(withEdges.length > 0);
      const problems: string[] = [];
      for (const edge of edges) {
        const problem = notAccepted(operation, await send(path, signed(edge.body)));
        if (problem) problems.push(`${describeMutation(edge)}: ${problem}`);
      }
      expect(problems).toEqual([]);
    },
  );

  it.each(jsonOperations.map((entry) => [entry.operation.operationId, entry] as const))(
    '%s: each single field taken out of its schema is refused, 400 errorCode 1',
    async (_, { path, operation, schema }) => {
      const [valid] = fc.sample(schemas.arbitrary(schema), { numRuns: 1, seed: 40 });
      const mutations = invalidMutations(schemas, schema, signed(valid as Record<string, unknown>));
      expect(mutations.length).toBeGreaterThan(5);
      const problems: string[] = [];
      for (const mutation of mutations) {
        const answer = await send(path, mutation.body);
        // The hash's description: not 1 to 64 hex digits is refused like a wrong hash.
        const [status, errorCode] =
          mutation.field === 'hash' && mutation.what === 'outside pattern' ? [401, 2] : [400, 1];
        const problem =
          undeclared(operation, answer) ??
          (answer.status === status && errorCodeOf(answer) === errorCode ? null : `${answer.status} ${answer.text}`);
        if (problem) problems.push(`${describeMutation(mutation)}: ${problem}`);
      }
      expect(problems).toEqual([]);
    },
  );

  it('takes the largest timestamp the document allows, in both forms, as well formed: 401 errorCode 3 (outside the window), and one more as malformed: 400 naming the largest', async () => {
    const readAll = jsonOperations.find(({ operation }) => operation.operationId === 'readAllRewardConfigurations');
    const timestamp = schemas.resolve(readAll?.schema ?? {}).properties?.timestamp ?? {};
    const integerForm = schemas
      .resolve(timestamp)
      .anyOf?.map((branch) => schemas.resolve(branch))
      .find((branch) => branch.type === 'integer');
    const largest = integerForm?.maximum ?? 2 ** 60;
    const sign = (value: number | string) => ({
      merchantId: merchant.id,
      timestamp: value,
      hash: signMessage(merchant.id, String(value), merchant.secretKey),
    });
    for (const value of [largest, String(largest)]) {
      expect(schemas.matches(timestamp, value), `${JSON.stringify(value)} valid`).toBe(true);
      const answer = await send(readAll?.path ?? '', sign(value));
      expect([answer.status, errorCodeOf(answer)], answer.text).toEqual([401, 3]);
    }
    // 17 digits as a JSON number, written out: what a client sends, not the double JSON.parse makes of it.
    const seventeenDigits = `{"merchantId":"${merchant.id}","timestamp":12345678901234567,"hash":"00"}`;
    for (const body of [sign(largest + 1), sign(String(largest + 1)), sign('12345678901234567'), seventeenDigits]) {
      const sent = typeof body === 'string' ? (JSON.parse(body) as Record<string, unknown>) : body;
      expect(schemas.matches(timestamp, sent.timestamp), `${JSON.stringify(body)} invalid`).toBe(false);
      const answer = await send(readAll?.path ?? '', body);
      expect([answer.status, errorCodeOf(answer)], answer.text).toEqual([400, 1]);
      // The message names the range the value left (it once called such a value "not a non-negative integer").
      expect(answer.text).toContain(`an integer from 0 to ${Number.MAX_SAFE_INTEGER}`);
    }
  });
});
