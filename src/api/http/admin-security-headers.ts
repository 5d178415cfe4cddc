import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';
import { nodeResponse } from '../library-bypasses/node-http.js';

/**
 * Headers on every answer of the admin listener (dashboard, reference page, admin API, errors alike).
 * `frame-ancestors 'none'`: no other page may frame the dashboard to trick an operator into clicking
 * its buttons. Scripts and styles are left to the pages (bull-board and Scalar load their own from
 * this listener); what a page may never do is load plugins, take a base URL from elsewhere (bull-board
 * sets its own, on this listener) or post forms elsewhere.
 */
const ADMIN_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "frame-ancestors 'none'; base-uri 'self'; object-src 'none'; form-action 'self'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

export function adminSecurityHeaders(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // On Node's response, as the request id (request-id.ts): errors answered by onError carry them too.
    const outgoing = nodeResponse(c);
    if (outgoing) {
      for (const [name, value] of Object.entries(ADMIN_SECURITY_HEADERS)) outgoing.setHeader(name, value);
      await next();
      return;
    }
    await next();
    for (const [name, value] of Object.entries(ADMIN_SECURITY_HEADERS)) c.res.headers.set(name, value);
  };
}
