import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { AppError } from '../../shared/errors.js';
import { isWellFormedHash, verifySignature } from '../../shared/signature.js';
import { isUuid, timestampDigits } from '../../shared/wire-rules.js';
import type { ClientAddressResolver } from '../client-address.js';
import type { AppEnv } from '../context.js';
import type { AuthenticatedMerchant } from '../merchant-directory.js';
import { rateLimitHeaders } from '../rate-limiter.js';

export interface MerchantAuthOptions {
  /** `/api/v1/...` types merchantId as a UUID; `/betSlip` takes any string. */
  merchantIdIsUuid: boolean;
  /** Where the signed fields are: the JSON body, or (GET /betSlip) the query string. */
  source: 'body' | 'query';
  resolveClientAddress: ClientAddressResolver;
}

interface SignedFields {
  merchantId: string;
  /** As sent: the digits that were signed. */
  timestampText: string;
  timestamp: number;
  hash: string;
}

/**
 * The one gate in front of every merchant route (DESIGN §3). Order matters: field shapes (400),
 * then who is asking and whether the signature holds (401, one answer for every reason), then the
 * timestamp window (401), the source address (403) and the rate (429). Only then does the route
 * validate the rest of the body.
 */
export function merchantAuth(options: MerchantAuthOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const fields = readSignedFields(await readInput(c, options.source), options.merchantIdIsUuid);
    const { deps, logger } = c.var;

    const merchant = isUuid(fields.merchantId) ? await findMerchant(c, fields.merchantId) : null;
    const refusal = whyRefused(merchant, fields, Date.now());
    if (refusal) {
      throw new AppError('AUTHENTICATION_FAILED', undefined, { logDetail: refusal });
    }
    const authenticated = merchant as AuthenticatedMerchant;

    const skew = Math.abs(Date.now() - fields.timestamp);
    if (skew > deps.config.SIGNATURE_WINDOW_MS) {
      throw new AppError('TIMESTAMP_EXPIRED', undefined, { logDetail: `clock difference ${skew} ms` });
    }

    if (authenticated.isAllowedSource) {
      const source = options.resolveClientAddress(getConnInfo(c).remote.address, c.req.header('x-forwarded-for'));
      if (!source || !authenticated.isAllowedSource(source)) {
        throw new AppError('FORBIDDEN', undefined, { logDetail: `source ${source ?? 'unknown'} not in allow-list` });
      }
    }

    const limit = authenticated.rateLimitPerSecond ?? deps.config.RATE_LIMIT_PER_SECOND;
    if (limit > 0) {
      const rate = await deps.rateLimiter.take(authenticated.id, limit);
      for (const [name, value] of Object.entries(rateLimitHeaders(rate))) c.header(name, value);
      if (!rate.allowed) throw new AppError('RATE_LIMITED', undefined, { retryAfterSeconds: rate.resetSeconds });
    }

    c.set('merchant', authenticated);
    c.set('logger', logger.child({ merchantId: authenticated.id }));
    await next();
  };
}

async function findMerchant(c: Context<AppEnv>, merchantId: string): Promise<AuthenticatedMerchant | null> {
  try {
    return await c.var.deps.merchants.find(merchantId);
  } catch (error) {
    throw new AppError('SERVICE_UNAVAILABLE', undefined, { cause: error, retryAfterSeconds: 1, logDetail: 'database' });
  }
}

function whyRefused(merchant: AuthenticatedMerchant | null, fields: SignedFields, now: number): string | null {
  if (!merchant) return 'unknown merchant';
  if (merchant.status !== 'ACTIVE') return 'merchant disabled';
  if (!isWellFormedHash(fields.hash)) return 'hash is not 1 to 64 hex characters';
  if (verifySignature(fields.merchantId, fields.timestampText, fields.hash, merchant.secretKey)) return null;
  const previousStillValid =
    merchant.previousSecretKey !== null &&
    merchant.previousSecretValidUntil !== null &&
    merchant.previousSecretValidUntil > now;
  if (
    previousStillValid &&
    verifySignature(fields.merchantId, fields.timestampText, fields.hash, merchant.previousSecretKey as string)
  ) {
    return null;
  }
  return 'hash mismatch';
}

async function readInput(c: Context<AppEnv>, source: 'body' | 'query'): Promise<Record<string, unknown>> {
  if (source === 'query') return c.req.query();
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw new AppError('INVALID_REQUEST', 'Malformed JSON in request body');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('INVALID_REQUEST', 'Request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

function readSignedFields(input: Record<string, unknown>, merchantIdIsUuid: boolean): SignedFields {
  const { merchantId, timestamp, hash } = input;
  if (typeof merchantId !== 'string' || merchantId.length === 0) {
    throw new AppError('INVALID_REQUEST', 'merchantId: required, a string');
  }
  if (merchantIdIsUuid && !isUuid(merchantId)) {
    throw new AppError('INVALID_REQUEST', 'merchantId: must be a UUID');
  }
  const timestampText = timestampDigits(timestamp);
  if (timestampText === null) {
    throw new AppError('INVALID_REQUEST', 'timestamp: required, epoch milliseconds as a non-negative integer');
  }
  if (typeof hash !== 'string') {
    throw new AppError('INVALID_REQUEST', 'hash: required, a string');
  }
  return { merchantId, timestampText, timestamp: Number(timestampText), hash };
}

export type MerchantRouteMiddleware = MiddlewareHandler<AppEnv>;
