import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets in constant time. Both are hashed first so that the comparison runs on equal
 * lengths whatever was sent: neither the content nor the length of the expected value leaks through
 * timing, and `timingSafeEqual` never throws on a length mismatch.
 */
export function safeEqual(a: string, b: string): boolean {
  const digestA = createHash('sha256').update(a, 'utf8').digest();
  const digestB = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(digestA, digestB);
}
