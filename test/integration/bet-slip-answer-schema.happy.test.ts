import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BET_SLIP_ANSWER_FIELDS, BET_SLIP_ITEM_FIELDS } from '../../src/api/bet-slip/bet-slip-answer-fields.js';
import { BetSlipResponseSchema } from '../../src/api/bet-slip/bet-slip-answer-schema.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { bet, createMerchant, createSession, type MerchantFixture, type SessionOptions } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';

/**
 * The /betSlip answer is written without its schema (src/api/library-bypasses/bet-slip-answer.ts), and
 * the OpenAPI document publishes the schema: both come from one definition
 * (src/api/bet-slip/bet-slip-answer-fields.ts). Here real answers are parsed with the published schema,
 * so that an answer and the document cannot part without a failure.
 */

let env: TestEnvironment;
let api: TestApi;
let merchant: MerchantFixture;

beforeAll(async () => {
  env = await createTestEnvironment();
  api = await startTestApi(env);
  merchant = await createMerchant(env.db);
});
afterAll(async () => {
  await api?.close();
  await env?.close();
});

let playerSequence = 0;

async function answer(options: Partial<SessionOptions>): Promise<Record<string, unknown>> {
  const created = await createSession(env.db, {
    merchantId: merchant.id,
    playerId: `schema-player-${++playerSequence}`,
    ...options,
  });
  const response = await api.post('/betSlip', signedBody(merchant, { authToken: created.token }));
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

/** The names in `keys` that `object` has, in the order of `keys`. */
const present = (keys: object, object: object) => Object.keys(keys).filter((key) => Object.hasOwn(object, key));

const sessions: Array<{ what: string; options: Partial<SessionOptions> }> = [
  {
    what: 'every field known',
    options: {
      currency: 'GBP',
      balance: '98765432109876543.21',
      ipAddress: '203.0.113.7',
      devicePlatform: 'mobile',
      player: {
        username: 'jdoe',
        nickname: 'Lucky "J"',
        firstName: 'Jane',
        lastName: 'Doe',
        gender: 'female',
        email: 'jane.doe@example.com',
        phone: '+44 20 7946 0000',
        address: '1 High Street',
        city: 'São Paulo',
        country: 'GB',
        language: 'DEU',
        test: true,
      },
      betSlip: [bet({ betSlipId: 'slip-9', margin: 0.05 }), bet({ betSlipId: undefined, margin: null })],
    },
  },
  { what: 'only what is required', options: { balance: '0' } },
];

describe.each(sessions)('a /betSlip answer with $what', ({ options }) => {
  it('parses with the published response schema, nothing left over', async () => {
    const body = await answer(options);
    // The schema drops members it does not know: an answer with one more field is not equal.
    expect(BetSlipResponseSchema.parse(body)).toEqual(body);
  });

  it("writes its fields, and its items' fields, in the definition's order", async () => {
    const body = await answer(options);
    expect(Object.keys(body)).toEqual(present(BET_SLIP_ANSWER_FIELDS, body));
    for (const item of body.betSlip as object[]) expect(Object.keys(item)).toEqual(present(BET_SLIP_ITEM_FIELDS, item));
  });
});

describe('the published response schema', () => {
  it('refuses an answer that parts from it', async () => {
    const body = await answer({ betSlip: [bet()] });
    const [item] = body.betSlip as Array<Record<string, unknown>>;
    expect(BetSlipResponseSchema.safeParse(body).success).toBe(true);
    expect(BetSlipResponseSchema.safeParse({ ...body, balance: '0' }).success).toBe(false);
    expect(BetSlipResponseSchema.safeParse({ ...body, language: undefined }).success).toBe(false);
    expect(BetSlipResponseSchema.safeParse({ ...body, betSlip: [{ ...item, odd: undefined }] }).success).toBe(false);
  });
});
