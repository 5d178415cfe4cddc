import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The merchant signature (docs/design.md §2): HMAC-SHA256 over the UTF-8 bytes of `merchantId` followed by
 * the decimal digits of `timestamp`, keyed with the merchant's secret, as hex. The same function
 * signs in tests, the signing helper and the benchmarks, so they cannot drift from the verifier.
 */

const HEX_DIGEST_LENGTH = 64;
const HASH_SHAPE = /^[0-9a-fA-F]{1,64}$/;

export function signMessage(merchantId: string, timestamp: number | string, secretKey: string): string {
  return createHmac('sha256', secretKey).update(`${merchantId}${timestamp}`, 'utf8').digest('hex');
}

/** True when `hash` has the shape of a digest we can compare: 1 to 64 hex characters. */
export function isWellFormedHash(hash: string): boolean {
  return HASH_SHAPE.test(hash);
}

/**
 * The digest's 32 bytes, or null when `hash` is not 1 to 64 hex characters. Senders that print the
 * digest as a big integer drop its leading zeros, and some print upper case: every such spelling
 * gives the same bytes, which both the verifier and every record keyed on the signature use.
 */
export function parseHash(hash: string): Buffer | null {
  return isWellFormedHash(hash) ? Buffer.from(hash.padStart(HEX_DIGEST_LENGTH, '0'), 'hex') : null;
}

/** True when `digest` signs `merchantId` + `timestampText` under this secret; constant time over 32 bytes. */
export function verifyDigest(merchantId: string, timestampText: string, digest: Buffer, secretKey: string): boolean {
  const expected = createHmac('sha256', secretKey).update(`${merchantId}${timestampText}`, 'utf8').digest();
  return digest.length === expected.length && timingSafeEqual(digest, expected);
}

/** `hash` as sent, in any spelling `parseHash` accepts. */
export function verifySignature(
  merchantId: string,
  timestamp: number | string,
  hash: string,
  secretKey: string,
): boolean {
  const digest = parseHash(hash);
  return digest !== null && verifyDigest(merchantId, `${timestamp}`, digest, secretKey);
}

/*
 * Version 2, opt-in per merchant: the interface's signature above covers only merchantId and
 * timestamp, so a signature seen once could sign any other request within the window. A version-2
 * merchant also sends `X-Signature: t=<epoch ms>,v1=<hex>`, where hex is HMAC-SHA256 (keyed with the
 * merchant's secret) over `<t>.<METHOD>.<path with query>.<raw body>`. `v1` names the digest scheme
 * (HMAC-SHA256), as in the headers of Stripe and Standard Webhooks, so a later scheme can sit beside it.
 */

export const SIGNATURE_HEADER = 'X-Signature';

/** Exactly `t=<1 to 16 digits>,v1=<64 hex>`: a digest with its leading zeros is required here. */
const SIGNATURE_HEADER_SHAPE = /^t=(\d{1,16}),v1=([0-9a-fA-F]{64})$/;

/** What a version-2 signature binds: the request as the service receives it. */
export interface BodyBoundRequest {
  method: string;
  /** The path and query string as received, e.g. `/betSlip?merchantId=…&timestamp=…`. */
  pathWithQuery: string;
  /** The body's bytes exactly as received (a string is taken as its UTF-8 bytes); empty for GET. */
  body: Uint8Array | string;
}

/**
 * An `X-Signature` as parsed: the one form in which it is verified and in which its replay record is
 * keyed (idempotency.ts), whatever spelling was sent (hex case, zeros before `t`, spaces around).
 */
export interface SignatureHeader {
  /** Its `t`, epoch ms: the replay record lives until `t` leaves the signature window. */
  timestamp: number;
  /** The 32 bytes of the digest sent. */
  digest: Buffer;
}

/** A verified `X-Signature`, for the replay record of the cancel routes (enqueue-cancellation.ts). */
export type BodyBoundSignature = SignatureHeader;

function bodyBoundDigest(secretKey: string, timestamp: number, request: BodyBoundRequest): Buffer {
  return createHmac('sha256', secretKey)
    .update(`${timestamp}.${request.method.toUpperCase()}.${request.pathWithQuery}.`, 'utf8')
    .update(typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body)
    .digest();
}

/** The value of the `X-Signature` header for this request, signed at `timestamp` (epoch ms). */
export function signatureHeaderValue(secretKey: string, timestamp: number, request: BodyBoundRequest): string {
  return canonicalSignatureHeader({ timestamp, digest: bodyBoundDigest(secretKey, timestamp, request) });
}

/** The header in its one canonical spelling: `t` without leading zeros, the digest in lower-case hex. */
export function canonicalSignatureHeader(header: SignatureHeader): string {
  return `t=${header.timestamp},v1=${header.digest.toString('hex')}`;
}

/**
 * The header's parts, or null when it is absent or not of the one accepted shape. Hex in either case,
 * zeros before `t` and spaces around the value are accepted (they sign the same string, `t` being
 * signed as its number): the parts returned are the same for every such spelling, and nothing keys
 * on the text as sent.
 */
export function parseSignatureHeader(value: string | undefined): SignatureHeader | null {
  const match = value === undefined ? null : SIGNATURE_HEADER_SHAPE.exec(value.trim());
  if (!match) return null;
  const timestamp = Number(match[1]);
  if (!Number.isSafeInteger(timestamp)) return null;
  return { timestamp, digest: Buffer.from(match[2] as string, 'hex') };
}

/** True when the header's digest is this request's, under this secret; constant time over 32 bytes. */
export function verifyBodyBound(header: SignatureHeader, request: BodyBoundRequest, secretKey: string): boolean {
  const expected = bodyBoundDigest(secretKey, header.timestamp, request);
  return header.digest.length === expected.length && timingSafeEqual(header.digest, expected);
}
