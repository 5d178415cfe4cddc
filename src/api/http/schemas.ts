import { z } from '@hono/zod-openapi';
import { DEFAULT_BULK_MAX_ITEMS } from '../../shared/config/config.js';
import { configurationStatuses, rewardTypes } from '../../shared/db/schema.js';
import { AppError } from '../../shared/errors/errors.js';
import { identifierSchema, timestampSchema, uuidSchema } from '../../shared/wire-rules.js';

/**
 * Schemas shared by several routes. The same objects validate requests and generate /openapi.json.
 */

export const ErrorBodySchema = z
  .object({
    errorCode: z.number().int().openapi({ example: 1 }),
    errorMessage: z.string().openapi({ example: 'ids[3]: Invalid UUID' }),
  })
  .openapi('Error');

/**
 * The three fields every merchant request carries (docs/design.md §2). The auth middleware checks them first.
 * Their examples are placeholders, never the demo merchant's values: a request copied from the document
 * must not authenticate on a deployment that loaded the demo data. SIGNING_EXAMPLE_PLACEHOLDERS names them
 * (a test puts the first v1 vector of docs/signing-test-vectors.json in their place and checks it verifies).
 */
export const SIGNING_EXAMPLE_PLACEHOLDERS = {
  merchantId: '<your-merchant-id>',
  hash: '<hex HMAC-SHA256 of merchantId followed by timestamp>',
  xSignature: 't=<epoch ms>,v1=<hex HMAC-SHA256 of t.METHOD.path.body>',
} as const;

export const signedFields = {
  merchantId: uuidSchema().openapi({
    description: 'The merchant, as the operator registered it; the first part of the signed string',
    example: SIGNING_EXAMPLE_PLACEHOLDERS.merchantId,
  }),
  timestamp: timestampSchema().openapi({
    description:
      'Epoch milliseconds, within ±5 minutes of the server clock (else 401, errorCode 3): a JSON integer, or a ' +
      'string of up to 16 digits (leading zeros allowed), at most 9007199254740991 either way. Its digits as sent ' +
      'are the second part of the signed string.',
    example: 1763679600000,
  }),
  hash: hashSchema(
    'hex HMAC-SHA256, keyed with the merchant secret, of the signed string: merchantId immediately followed by ' +
      'the timestamp digits as sent (`<merchantId><timestamp>`). Case ' +
      'does not matter; leading zeros may be left out.',
  ),
};

/**
 * `hash`: the pattern is checked with the signature, so a hash that does not match it is refused like a
 * wrong one (401, errorCode 2), not as a malformed field. Metadata only: the auth middleware checks it.
 */
export function hashSchema(description: string) {
  return z.string().openapi({
    description: `${description} Not 1 to 64 hex digits: refused like a wrong hash, 401 errorCode 2.`,
    pattern: '^[0-9a-fA-F]{1,64}$',
    example: SIGNING_EXAMPLE_PLACEHOLDERS.hash,
  });
}

/** Merchant-chosen identifiers: 1 to 255 characters, no NUL (Postgres text cannot hold it). */
export const identifier = identifierSchema();

/** `dryRun` of the bulk cancel routes: count what the request would do, queue nothing. */
export const dryRunField = z
  .boolean()
  .nullish()
  .openapi({
    description:
      'true: queue nothing and answer 200 with what the request would do now (counts, as JSON). ' +
      'An Idempotency-Key is ignored on a dry run.',
  });

export const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorBodySchema } },
});

/** The error answers every merchant route can give (docs/design.md §3). */
export const merchantErrorResponses = {
  400: errorResponse('INVALID_REQUEST (errorCode 1): malformed JSON, missing or wrongly typed field'),
  401: errorResponse('AUTHENTICATION_FAILED (2) or TIMESTAMP_EXPIRED (3)'),
  403: errorResponse('FORBIDDEN (4): source address not in the merchant allow-list'),
  413: errorResponse(
    'PAYLOAD_TOO_LARGE (5): body over 16 KiB (2 MiB on bulkCancel and bulkCancelByQuery), refused before the signature is checked',
  ),
  415: errorResponse('UNSUPPORTED_MEDIA_TYPE (6)'),
  429: errorResponse(
    "RATE_LIMITED (7): over the merchant's requests per second (1,000 unless set otherwise) or its cap of queued bulk jobs; see Retry-After",
  ),
  500: errorResponse('INTERNAL_ERROR (99)'),
  503: errorResponse('SERVICE_UNAVAILABLE (11); see Retry-After'),
} as const;

export const adminErrorResponses = {
  400: errorResponse('INVALID_REQUEST (1)'),
  401: errorResponse('AUTHENTICATION_FAILED (2): missing or wrong admin token'),
  404: errorResponse('NOT_FOUND (10)'),
  500: errorResponse('INTERNAL_ERROR (99)'),
  503: errorResponse('SERVICE_UNAVAILABLE (11)'),
} as const;

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true,
  description,
  content: { 'application/json': { schema } },
});

/**
 * A list of a bulk route: 1 to BULK_MAX_ITEMS entries. The size is checked by the route (assertListSize,
 * against the deployment's setting); the documents state the default.
 */
export const bulkList = <T extends z.ZodType>(item: T, minItems: 0 | 1) =>
  z.array(item).openapi({ minItems, maxItems: DEFAULT_BULK_MAX_ITEMS });

/** The lists `count` entries long that a bulk route accepts: 1 to `max` (BULK_MAX_ITEMS). */
export function assertListSize(count: number, max: number, what: string): void {
  if (count === 0) throw new AppError('INVALID_REQUEST', `${what}: at least one entry is required`);
  if (count > max) throw new AppError('INVALID_REQUEST', `${what}: at most ${max} entries, got ${count}`);
}

const BetConstraintSchema = z.object({
  betAmount: z.number().openapi({ example: 0.5 }),
  maxWinPerBet: z.number().openapi({ example: 100 }),
});

/** A reward configuration as readAll lists it and the admin API answers its creation. */
export const RewardConfigurationSchema = z
  .object({
    id: uuidSchema(),
    name: z.string(),
    status: z.enum(configurationStatuses),
    rewardType: z.enum(rewardTypes),
    numberOfFreeBets: z.number().int(),
    startDate: z.number().int().openapi({ description: 'Epoch milliseconds' }),
    endDate: z.number().int().openapi({ description: 'Epoch milliseconds' }),
    duration: z.number().int().openapi({ description: 'Minutes' }),
    merchantId: uuidSchema(),
    games: z.array(
      z.object({
        id: uuidSchema(),
        gameId: z.number().int(),
        betConstraints: z.record(z.string().regex(/^[A-Z]{3}$/), BetConstraintSchema).openapi({
          description: 'Keyed by ISO 4217 currency code',
          example: { EUR: { betAmount: 0.5, maxWinPerBet: 100 } },
        }),
      }),
    ),
  })
  .openapi('RewardConfiguration');
