import { randomBytes } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { isIpOrCidr } from '../../shared/config/ip-ranges.js';
import type { Db } from '../../shared/db/client.js';
import type { Merchant } from '../../shared/db/schema.js';
import { AppError } from '../../shared/errors/errors.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import { findMerchantById } from '../auth/merchant-directory.js';

/** What every admin route declares in the OpenAPI document. */
export const adminRouteMeta = {
  tags: ['Admin'],
  security: [{ adminBearer: [] }],
};

export const MerchantIdParamsSchema = z.object({
  merchantId: uuidSchema().openapi({
    param: { name: 'merchantId', in: 'path' },
    example: '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b',
  }),
});

/** 9999-12-31T23:59:59.999Z: every instant up to it has an ISO-8601 form and fits timestamptz. */
const MAX_EPOCH_MS = 253_402_300_799_999;

/** An instant as epoch milliseconds (JSON integer) or an ISO-8601 string; becomes a Date. */
export const instantSchema = z
  .union([z.number().int().min(0).max(MAX_EPOCH_MS), z.iso.datetime({ offset: true }), z.iso.date()], {
    error: 'epoch milliseconds (an integer) or an ISO-8601 date-time',
  })
  .transform((value) => new Date(value))
  .openapi({ description: 'Epoch milliseconds, or an ISO-8601 string', example: 1767225600000 });

const DECIMAL_TEXT = /^-?\d{1,30}(\.\d{1,30})?$/;
const DECIMAL_MESSAGE = 'must be a decimal amount: a JSON number, or a string of digits such as "12.50"';

/**
 * A decimal amount as a JSON number or a string of digits, handed on as text so that the `numeric`
 * column stores it without another rounding (a JSON number has already been through a double).
 */
export function decimalSchema(sign: 'positive' | 'nonNegative') {
  return z
    .union([z.number(), z.string().regex(DECIMAL_TEXT, DECIMAL_MESSAGE)], { error: DECIMAL_MESSAGE })
    .refine(
      (value) =>
        typeof value === 'number'
          ? sign === 'positive'
            ? value > 0
            : value >= 0
          : !value.startsWith('-') && (sign === 'nonNegative' || /[1-9]/.test(value)),
      { message: sign === 'positive' ? 'must be greater than 0' : 'must not be negative' },
    )
    .transform((value) => (typeof value === 'number' ? String(value) : value))
    .openapi({ example: 12.5 });
}

export const currencyCodeSchema = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code: three capital letters')
  .openapi({ example: 'EUR' });

export const allowedIpsSchema = z
  .array(z.string().max(64).refine(isIpOrCidr, 'must be an IPv4/IPv6 address or a CIDR range'))
  .min(1, 'give at least one address or range, or null for any source')
  .max(1_000)
  .nullable()
  .openapi({ description: 'Source addresses or CIDR ranges allowed; null: any source', example: ['203.0.113.0/24'] });

/**
 * A per-merchant quota: a positive whole number, or null for the deployment's default. The upper bound
 * is what the integer column holds, so a huge number is a 400 rather than a database error.
 */
export const quotaSchema = z.number().int().min(1).max(2_147_483_647).nullable();

/** Which signature rule the merchant's requests must follow (docs/interface.md, "Signature version 2"). */
export const signatureVersionSchema = z.union([z.literal(1), z.literal(2)]).openapi({
  description:
    "1: the interface's signature (merchantId and timestamp) alone. 2: every request must also carry " +
    '`X-Signature: t=<epoch ms>,v1=<hex>`, an HMAC-SHA256 over the time, method, path with query and raw body.',
  example: 2,
});

/** Version 1 refused where a captured signature does harm: the cancel and abort routes. */
export const requireSignatureV2Schema = z.boolean().openapi({
  description:
    'true: the cancel routes and the job abort refuse version 1 (401, errorCode 2) and require `X-Signature` ' +
    "even while signatureVersion is 1; the read routes keep the merchant's signatureVersion. Default false.",
  example: true,
});

/** The merchant a route's path names, or 404. */
export async function requireMerchant(db: Db, merchantId: string): Promise<Merchant> {
  const merchant = await findMerchantById(db, merchantId);
  if (!merchant) throw new AppError('NOT_FOUND', 'Merchant not found');
  return merchant;
}

/**
 * Shortest merchant secret an admin may set: 32 characters, so at least 32 bytes. A secret signs
 * `merchantId + timestamp`, both visible in a captured request, so a short one could be searched offline.
 */
export const MIN_SECRET_LENGTH = 32;

/** 32 random bytes as hex: the secret of a new merchant or of a rotation. */
export function generateSecretKey(): string {
  return randomBytes(32).toString('hex');
}
