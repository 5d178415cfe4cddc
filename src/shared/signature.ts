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
 * Senders that print the digest as a big integer drop its leading zeros, and some print upper case:
 * both are accepted. The comparison itself runs in constant time over 32 bytes.
 */
export function verifySignature(
  merchantId: string,
  timestamp: number | string,
  hash: string,
  secretKey: string,
): boolean {
  if (!isWellFormedHash(hash)) return false;
  const received = Buffer.from(hash.padStart(HEX_DIGEST_LENGTH, '0'), 'hex');
  const expected = createHmac('sha256', secretKey).update(`${merchantId}${timestamp}`, 'utf8').digest();
  return received.length === expected.length && timingSafeEqual(received, expected);
}
