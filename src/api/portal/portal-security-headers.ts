import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';
import { nodeResponse } from '../library-bypasses/node-http.js';

/**
 * Headers on every answer under /portal (pages, assets, the JSON API, errors alike). The policy allows
 * this listener's own scripts, styles, images and requests only, and nothing inline: a value that slipped
 * into the page as markup could not run. No site may frame the portal (clickjacking its buttons), and no
 * address (a link's token) leaves in a Referer.
 */
const PORTAL_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

export function portalSecurityHeaders(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // On Node's response, as the admin headers: errors answered by onError carry them too.
    const outgoing = nodeResponse(c);
    if (outgoing) {
      for (const [name, value] of Object.entries(PORTAL_SECURITY_HEADERS)) outgoing.setHeader(name, value);
      await next();
      return;
    }
    await next();
    for (const [name, value] of Object.entries(PORTAL_SECURITY_HEADERS)) c.res.headers.set(name, value);
  };
}
