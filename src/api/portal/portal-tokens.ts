import { createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * The portal's bearer secrets (links and sessions): 256 random bits, base64url. Postgres keeps only
 * their SHA-256, so a copy of its tables opens no portal; a token is compared by looking its hash up.
 */
export function newPortalToken(): string {
  return randomBytes(32).toString('base64url');
}

export function portalTokenHash(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * The session's CSRF token, derived from the session's own secret (nothing more to store): the page
 * reads it from `GET /portal/api/session`, which another site's page cannot read (same-origin policy,
 * no CORS), and sends it back in `X-CSRF-Token` with every write.
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('portal-csrf').digest('base64url');
}
