import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { AppError, RETRY_SOON_SECONDS } from '../../shared/errors/errors.js';
import { SecretUnreadableError } from '../../shared/secrets/secret-sealer.js';
import { isUuid, TIMESTAMP_MAX, timestampDigits } from '../../shared/wire-rules.js';
import type { AppEnv } from '../context.js';
import type { ClientAddressResolver } from '../http/client-address.js';
import { requestJson } from '../library-bypasses/request-body.js';
import { rateLimitHeaders } from '../limits/rate-limiter.js';
import type { AuthenticatedMerchant } from './merchant-directory.js';
import { authRefusal, echo, timestampExpiredMessage, unusualTimestampSpelling } from './refusal-messages.js';
import {
  type BodyBoundRequest,
  type BodyBoundSignature,
  parseHash,
  parseSignatureHeader,
  SIGNATURE_HEADER,
  verifyBodyBound,
  verifyDigest,
} from './signature.js';
import { isSeenInUrl, markSeenInUrl, type SignedTriple } from './url-signature-binding.js';

export interface MerchantAuthOptions {
  /** `/api/v1/...` types merchantId as a UUID; `/betSlip` takes any string. */
  merchantIdIsUuid: boolean;
  /** Where the signed fields are: the JSON body, or (GET /betSlip) the query string. */
  source: 'body' | 'query';
  /**
   * `cancel`: the routes that queue or stop work (the three cancels, the abort). There a merchant's
   * requireSignatureV2 refuses version 1, and a Redis that cannot say whether a signature is bound to a
   * URL refuses the request (503). `read`: the other routes, which go on without that answer.
   */
  guard: 'cancel' | 'read';
  /**
   * A version-1 triple seen in a URL (url-signature-binding.ts): `mark` it (GET /betSlip, whose query
   * carries it), `refuse` it (every route that could do more with it than a bet slip URL already
   * does), or `allow` it (POST /betSlip: the same triple on a GET /betSlip is served by design, with
   * the same fields, so refusing it here would guard nothing and cost a Redis round trip per request).
   */
  seenInUrl: 'mark' | 'refuse' | 'allow';
  resolveClientAddress: ClientAddressResolver;
}

interface RequestInput {
  fields: Record<string, unknown>;
  /** The body's bytes as received: what a version-2 signature covers. Empty for GET /betSlip. */
  rawBody: Uint8Array;
}

interface SignedFields {
  merchantId: string;
  /** As sent: the digits that were signed. */
  timestampText: string;
  timestamp: number;
  /** The hash's 32 bytes, parsed once (null: not 1 to 64 hex characters); verified and bound as such. */
  digest: Buffer | null;
}

/**
 * The one gate in front of every merchant route (docs/design.md §2). Order matters: field shapes
 * (400), then who is asking and whether the signature holds (401, one answer for every reason; for a
 * version-2 merchant also the `X-Signature` header), then the timestamp window (401), the source
 * address (403) and the rate (429). Only then does the route validate the rest of the body.
 *
 * A version-1 triple seen in a URL (url-signature-binding.ts) is marked as soon as its signature holds,
 * whatever the answer, and refused before the source address and the rate: a triple in a logged URL is
 * bound even when its own request was refused, and a refused replay costs the merchant no budget.
 */
export function merchantAuth(options: MerchantAuthOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const input = readInput(c, options.source);
    const fields = readSignedFields(input.fields, options.merchantIdIsUuid);
    const deps = c.get('deps');

    const merchant = isUuid(fields.merchantId) ? await findMerchant(c, fields.merchantId) : null;
    const now = Date.now();
    const refusal = whyRefused(merchant, fields, now);
    if (refusal) {
      throw new AppError('AUTHENTICATION_FAILED', refusalMessage(refusal, fields, input.rawBody), {
        logDetail: refusal,
      });
    }
    const authenticated = merchant as AuthenticatedMerchant;
    const v1Refused = options.guard === 'cancel' && authenticated.requireSignatureV2;
    const bodyBound =
      authenticated.signatureVersion === 2 || v1Refused
        ? checkBodyBound(c, authenticated, input.rawBody, now, v1Refused)
        : null;

    // A v2 request is bound to itself by its X-Signature; only a v1 triple can be carried elsewhere.
    const triple: SignedTriple | null =
      bodyBound === null && options.seenInUrl !== 'allow'
        ? { merchantId: authenticated.id, timestamp: fields.timestamp, digest: fields.digest as Buffer }
        : null;
    if (triple && options.seenInUrl === 'mark') await checkUrlBinding(c, options, triple);

    checkWindow(deps.config.SIGNATURE_WINDOW_MS, fields.timestamp, bodyBound, now);

    if (triple && options.seenInUrl === 'refuse') await checkUrlBinding(c, options, triple);

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

    if (bodyBound) c.set('bodyBoundSignature', bodyBound);
    c.set('merchant', authenticated);
    c.set('logger', c.get('logger').with({ merchantId: authenticated.id }));
    await next();
  };
}

/** The body's `timestamp`, and a version-2 request's `X-Signature` `t`, must be within the window (401). */
function checkWindow(window: number, timestamp: number, bodyBound: BodyBoundSignature | null, now: number): void {
  const skew = Math.abs(now - timestamp);
  if (skew > window) {
    throw new AppError('TIMESTAMP_EXPIRED', timestampExpiredMessage('timestamp', timestamp, now, window), {
      logDetail: `clock difference ${skew} ms`,
    });
  }
  const headerSkew = bodyBound === null ? 0 : Math.abs(now - bodyBound.timestamp);
  if (headerSkew > window) {
    throw new AppError(
      'TIMESTAMP_EXPIRED',
      timestampExpiredMessage('X-Signature t', (bodyBound as BodyBoundSignature).timestamp, now, window),
      { logDetail: `X-Signature t: clock difference ${headerSkew} ms` },
    );
  }
}

async function findMerchant(c: Context<AppEnv>, merchantId: string): Promise<AuthenticatedMerchant | null> {
  try {
    return await c.get('deps').merchants.find(merchantId);
  } catch (error) {
    // A stored secret that does not open (a key missing from SECRETS_KEYS, a row altered) is the
    // deployment's fault, not the caller's and not a passing outage: 500 and an error log naming the cause.
    if (error instanceof SecretUnreadableError) {
      throw new AppError('INTERNAL_ERROR', undefined, { cause: error, logDetail: 'merchant secret unreadable' });
    }
    throw new AppError('SERVICE_UNAVAILABLE', undefined, {
      cause: error,
      retryAfterSeconds: RETRY_SOON_SECONDS,
      logDetail: 'database',
    });
  }
}

type Refusal = 'unknown merchant' | 'merchant disabled' | 'hash is not 1 to 64 hex characters' | 'hash mismatch';

/** The message a merchant reads: which of its mistakes it is (refusal-messages.ts). */
function refusalMessage(refusal: Refusal, fields: SignedFields, rawBody: Uint8Array): string {
  switch (refusal) {
    case 'unknown merchant':
      return authRefusal.unknownMerchant;
    case 'merchant disabled':
      return authRefusal.disabledMerchant;
    case 'hash is not 1 to 64 hex characters':
      return authRefusal.malformedHash;
    case 'hash mismatch': {
      const spelling = unusualTimestampSpelling(rawBody);
      return spelling === null
        ? authRefusal.hashMismatch(fields.timestampText)
        : authRefusal.timestampSpelling(spelling, fields.timestampText);
    }
  }
}

function whyRefused(merchant: AuthenticatedMerchant | null, fields: SignedFields, now: number): Refusal | null {
  if (!merchant) return 'unknown merchant';
  if (merchant.status !== 'ACTIVE') return 'merchant disabled';
  const digest = fields.digest;
  if (digest === null) return 'hash is not 1 to 64 hex characters';
  const verifies = secretsInForce(merchant, now).some((secretKey) =>
    verifyDigest(fields.merchantId, fields.timestampText, digest, secretKey),
  );
  return verifies ? null : 'hash mismatch';
}

/** The current secret, and the previous one until its expiry (rotation). */
function secretsInForce(merchant: AuthenticatedMerchant, now: number): string[] {
  const previousStillValid =
    merchant.previousSecretKey !== null &&
    merchant.previousSecretValidUntil !== null &&
    merchant.previousSecretValidUntil > now;
  return previousStillValid ? [merchant.secretKey, merchant.previousSecretKey as string] : [merchant.secretKey];
}

/**
 * GET /betSlip marks its v1 triple as seen in a URL; the routes that could do more with it refuse a
 * triple so marked (url-signature-binding.ts). Unanswered by Redis: the cancel routes answer 503, the reads go on (they
 * change nothing, and GET /betSlip must keep answering while Redis is away).
 */
async function checkUrlBinding(c: Context<AppEnv>, options: MerchantAuthOptions, triple: SignedTriple): Promise<void> {
  const { requestRedis: redis, config } = c.get('deps');
  const store = { redis, prefix: config.QUEUE_PREFIX, windowMs: config.SIGNATURE_WINDOW_MS };
  const timeoutMs = options.guard === 'cancel' ? config.ENQUEUE_TIMEOUT_MS : config.RATE_LIMIT_TIMEOUT_MS;
  let refused = false;
  try {
    if (options.seenInUrl === 'mark') await markSeenInUrl(store, triple, timeoutMs);
    else refused = await isSeenInUrl(store, triple, timeoutMs);
  } catch (error) {
    if (options.guard === 'cancel') {
      throw new AppError('SERVICE_UNAVAILABLE', undefined, {
        retryAfterSeconds: RETRY_SOON_SECONDS,
        logDetail: 'redis (url signature binding)',
        cause: error,
      });
    }
    c.get('logger').warn({ err: error }, 'url signature binding not checked: Redis did not answer');
    return;
  }
  if (refused) {
    throw new AppError('AUTHENTICATION_FAILED', undefined, {
      logDetail: 'v1 signature seen in a GET /betSlip URL',
    });
  }
}

/**
 * Version 2: `X-Signature` must sign this very request (method, path with query, raw body), so a
 * signature seen on one request cannot sign another. Refused like any other bad signature (401,
 * errorCode 2); answers the header's `t` for the window check, which comes after, as for `timestamp`.
 */
function checkBodyBound(
  c: Context<AppEnv>,
  merchant: AuthenticatedMerchant,
  rawBody: Uint8Array,
  now: number,
  v1Refused: boolean,
): BodyBoundSignature {
  const value = c.req.header(SIGNATURE_HEADER);
  const header = parseSignatureHeader(value);
  if (!header) {
    const missing = value === undefined;
    const detail = missing ? 'missing' : 'not t=<digits>,v1=<64 hex>';
    const why = v1Refused ? ' (requireSignatureV2: version 1 refused on this route)' : '';
    const message = missing ? authRefusal.signatureHeaderMissing : authRefusal.signatureHeaderMalformed;
    throw new AppError('AUTHENTICATION_FAILED', `${message}${why}`, { logDetail: `X-Signature ${detail}${why}` });
  }
  // The URL as the HTTP server parsed it: the path and query string the client sent, in normal form.
  const url = new URL(c.req.url);
  const request: BodyBoundRequest = { method: c.req.method, pathWithQuery: url.pathname + url.search, body: rawBody };
  if (!secretsInForce(merchant, now).some((secretKey) => verifyBodyBound(header, request, secretKey))) {
    // The query of GET /betSlip holds the signed fields: named, not echoed.
    const query = url.search === '' ? '' : '?<the query string as sent>';
    const signedPrefix = `${header.timestamp}.${request.method.toUpperCase()}.${echo(url.pathname, 200)}${query}.`;
    throw new AppError('AUTHENTICATION_FAILED', authRefusal.signatureHeaderMismatch(signedPrefix, rawBody.length), {
      logDetail: 'X-Signature mismatch',
    });
  }
  return header;
}

function readInput(c: Context<AppEnv>, source: 'body' | 'query'): RequestInput {
  if (source === 'query') return { fields: c.req.query(), rawBody: new Uint8Array(0) };
  // The bytes as received (a version-2 signature covers exactly them, not a re-encoding of what
  // JSON.parse made of them), parsed once; the route's validator reuses this parse.
  const body = requestJson(c);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('INVALID_REQUEST', 'Request body must be a JSON object');
  }
  return { fields: body as Record<string, unknown>, rawBody: c.get('body') ?? new Uint8Array(0) };
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
    const sent = timestamp === undefined ? 'nothing' : echo(JSON.stringify(timestamp) ?? String(timestamp));
    throw new AppError(
      'INVALID_REQUEST',
      `timestamp: required, epoch milliseconds: an integer from 0 to ${TIMESTAMP_MAX}, or a string of up to ` +
        `16 decimal digits of such a value (got ${sent}; exponent and fraction forms such as 1.7636796E12 or ` +
        '1763679600000.0 are refused)',
    );
  }
  if (typeof hash !== 'string') {
    throw new AppError('INVALID_REQUEST', 'hash: required, a string');
  }
  return { merchantId, timestampText, timestamp: Number(timestampText), digest: parseHash(hash) };
}

export type MerchantRouteMiddleware = MiddlewareHandler<AppEnv>;
