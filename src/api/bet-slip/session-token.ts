import { createHash, randomBytes } from 'node:crypto';

/** Session tokens are stored as SHA-256 digests (docs/design.md §8): a database leak does not leak sessions. */
export function digestSessionToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** 32 random bytes, URL-safe: unguessable, and safe in a query string. */
export function generateSessionToken(): string {
  return randomBytes(32).toString('base64url');
}
