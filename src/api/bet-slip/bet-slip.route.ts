import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { AppError } from '../../shared/errors/errors.js';
import { timestampSchema, timestampTextSchema } from '../../shared/wire-rules.js';
import type { MerchantRouteMiddleware } from '../auth/merchant-auth.middleware.js';
import type { App, AppEnv } from '../context.js';
import { ErrorBodySchema, hashSchema, jsonBody, merchantErrorResponses } from '../http/schemas.js';
import { rawJson } from '../http/typed-responses.js';
import { betSlipAnswerJson } from '../library-bypasses/bet-slip-answer.js';
import { findBetSlipSession } from '../library-bypasses/bet-slip-session.js';
import { BetSlipResponseSchema } from './bet-slip-answer-schema.js';

const betSlipFields = {
  merchantId: z.string().min(1).openapi({
    description: 'The merchant; the first part of the signed string (not a registered merchant: 401 errorCode 2)',
    example: '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b',
  }),
  timestamp: timestampSchema().openapi({
    description:
      'Epoch milliseconds, within ±5 minutes of the server clock (else 401, errorCode 3): a JSON integer, or a ' +
      'string of up to 16 digits (leading zeros allowed), at most 9007199254740991 either way.',
    example: 1763679600000,
  }),
  authToken: z
    .string()
    .min(1)
    .max(1_024)
    .openapi({ description: 'Game session token', example: '<game-session-token>' }),
  hash: hashSchema(
    'hex HMAC-SHA256, keyed with the merchant secret, of the signed string: merchantId immediately followed by ' +
      'the timestamp digits as sent (authToken is not signed). Case does not matter; leading zeros may be left out.',
  ),
};

const BetSlipRequestSchema = z.object(betSlipFields).openapi('BetSlipRequest');
const BetSlipQuerySchema = z.object({
  ...betSlipFields,
  timestamp: timestampTextSchema().openapi({
    description:
      'Epoch milliseconds, within ±5 minutes of the server clock (else 401, errorCode 3): up to 16 digits ' +
      '(leading zeros allowed), at most 9007199254740991; the digits as sent are the second part of the signed string.',
    example: '1763679600000',
  }),
});

const description =
  'Validates a game session token and returns the player, wallet balance and bet slip. An unknown ' +
  'token, or one of another merchant, answers 200 with errorCode 8 (INVALID_TOKEN); an expired ' +
  'session answers 200 with errorCode 9 (TOKEN_EXPIRED).';

const responses = (auth: MerchantRouteMiddleware) => ({
  tags: ['Bet slip'],
  middleware: auth,
  description,
  responses: {
    200: {
      description: 'The bet slip, or an errorCode 8 / 9 body',
      content: { 'application/json': { schema: z.union([BetSlipResponseSchema, ErrorBodySchema]) } },
    },
    ...merchantErrorResponses,
  },
});

export function registerBetSlip(app: App, postAuth: MerchantRouteMiddleware, getAuth: MerchantRouteMiddleware): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/betSlip',
      operationId: 'postBetSlip',
      summary: 'Bet slip and token validation (JSON body)',
      request: { body: jsonBody(BetSlipRequestSchema) },
      ...responses(postAuth),
    }),
    async (c) => answerBetSlip(c, c.req.valid('json').authToken),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/betSlip',
      operationId: 'getBetSlip',
      summary: 'Bet slip and token validation (query parameters)',
      request: { query: BetSlipQuerySchema },
      ...responses(getAuth),
    }),
    async (c) => answerBetSlip(c, c.req.valid('query').authToken),
  );
}

async function answerBetSlip(c: Context<AppEnv>, authToken: string) {
  const found = await findBetSlipSession(c.get('deps').db, c.get('merchant').id, authToken);
  // A token of another merchant is not found under this one: the same answer as an unknown token.
  if (!found) throw new AppError('INVALID_TOKEN', undefined, { logDetail: 'unknown token' });
  if (found.expiresAt !== null && found.expiresAt.getTime() <= Date.now()) {
    throw new AppError('TOKEN_EXPIRED');
  }
  return rawJson(c, BetSlipResponseSchema, betSlipAnswerJson(found), 200);
}
