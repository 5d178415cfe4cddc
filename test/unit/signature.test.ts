import { describe, expect, it } from 'vitest';
import { isWellFormedHash, signMessage, verifySignature } from '../../src/api/auth/signature.js';

const merchantId = '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b';
const timestamp = 1763679600000;
const secret = 'merchant-secret-key';
// Computed outside this codebase: printf '%s' "$merchantId$timestamp" | openssl dgst -sha256 -hmac "$secret"
const knownDigest = 'b69bd2031f7a3c80069c4bbaf810ece836852dfdd54b7fd3dbf142ce3100526c';

/** A timestamp near `from` whose digest starts with `prefix`, found by trying successive ones. */
function timestampWithDigestPrefix(prefix: string, from = timestamp): number {
  for (let candidate = from; candidate < from + 1_000_000; candidate++) {
    if (signMessage(merchantId, candidate, secret).startsWith(prefix)) return candidate;
  }
  throw new Error(`no digest starting with ${prefix}`);
}

describe('signMessage', () => {
  it('is HMAC-SHA256 of merchantId followed by the timestamp digits, as lower-case hex', () => {
    expect(signMessage(merchantId, timestamp, secret)).toBe(knownDigest);
  });

  it('signs the concatenation with no separator (RFC 4231 test case 2)', () => {
    // The whole message in merchantId and an empty timestamp: any separator would change the digest.
    expect(signMessage('what do ya want for nothing?', '', 'Jefe')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  it('gives the same digest for the timestamp as a number and as its digit string', () => {
    expect(signMessage(merchantId, String(timestamp), secret)).toBe(knownDigest);
  });
});

describe('verifySignature', () => {
  it('accepts the exact digest', () => {
    expect(verifySignature(merchantId, timestamp, knownDigest, secret)).toBe(true);
    expect(verifySignature(merchantId, String(timestamp), knownDigest, secret)).toBe(true);
  });

  it('accepts upper-case and mixed-case hex', () => {
    expect(verifySignature(merchantId, timestamp, knownDigest.toUpperCase(), secret)).toBe(true);
    const mixed = [...knownDigest].map((ch, i) => (i % 2 ? ch.toUpperCase() : ch)).join('');
    expect(verifySignature(merchantId, timestamp, mixed, secret)).toBe(true);
  });

  it('accepts a digest printed as a big integer, its leading zeros dropped', () => {
    const signedAt = timestampWithDigestPrefix('00');
    const digest = signMessage(merchantId, signedAt, secret);
    const stripped = digest.replace(/^0+/, '');
    expect(stripped.length).toBeLessThan(63);
    expect(verifySignature(merchantId, signedAt, stripped, secret)).toBe(true);
    // Dropping one of the two zeros is as good as dropping both.
    expect(verifySignature(merchantId, signedAt, digest.slice(1), secret)).toBe(true);
  });

  it('does not accept a digest with a significant digit dropped', () => {
    // A digest with no leading zero: dropping its first digit changes its value.
    const signedAt = timestampWithDigestPrefix('f');
    const digest = signMessage(merchantId, signedAt, secret);
    expect(verifySignature(merchantId, signedAt, digest.slice(1), secret)).toBe(false);
    expect(verifySignature(merchantId, signedAt, digest.slice(0, -1), secret)).toBe(false);
  });

  it.each([
    ['empty', ''],
    ['65 characters (a zero too many)', `0${knownDigest}`],
    ['65 characters (one digit appended)', `${knownDigest}0`],
    ['non-hex characters', `${knownDigest.slice(0, 63)}g`],
    ['a 0x prefix', `0x${knownDigest.slice(2)}`],
    ['surrounding whitespace', ` ${knownDigest.slice(1)}`],
    ['base64 of the digest', Buffer.from(knownDigest, 'hex').toString('base64')],
  ])('rejects a hash that is %s', (_, hash) => {
    expect(isWellFormedHash(hash)).toBe(false);
    expect(verifySignature(merchantId, timestamp, hash, secret)).toBe(false);
  });

  it('rejects a digest made with another secret', () => {
    const forged = signMessage(merchantId, timestamp, 'another-secret');
    expect(verifySignature(merchantId, timestamp, forged, secret)).toBe(false);
  });

  it('rejects the digest for another timestamp or another merchant', () => {
    expect(verifySignature(merchantId, timestamp + 1, knownDigest, secret)).toBe(false);
    expect(verifySignature(merchantId.toUpperCase(), timestamp, knownDigest, secret)).toBe(false);
  });

  it('accepts 1 to 64 hex characters as the shape of a hash', () => {
    expect(isWellFormedHash('0')).toBe(true);
    expect(isWellFormedHash('A'.repeat(64))).toBe(true);
    expect(isWellFormedHash('a'.repeat(65))).toBe(false);
  });
});
