import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { publicBaseUrl } from '../../shared/config/config.js';
import { AppError } from '../../shared/errors/errors.js';
import { safeEqual } from '../auth/constant-time.js';
import type { AppEnv } from '../context.js';
import { findLivePortalSession, type PortalSession } from './portal-sessions.repository.js';
import { csrfTokenOf } from './portal-tokens.js';

const PORTAL_COOKIE = 'portal_session';
const CSRF_HEADER = 'X-CSRF-Token';

/**
 * The session cookie: `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page sends
 * it), `Path=/portal` (no other route of the listener sees it), `Secure` unless the merchants' listener
 * is reached over plain http (PUBLIC_BASE_URL, development only), for as long as the session lasts.
 */
export function setPortalCookie(c: Context<AppEnv>, token: string, expiresAt: Date): void {
  setCookie(c, PORTAL_COOKIE, token, {
    httpOnly: true,
    sameSite: 'Strict',
    path: '/portal',
    secure: publicBaseUrl(c.get('deps').config).startsWith('https:'),
    maxAge: Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000)),
  });
}

/** The live session of the request's cookie, or undefined (none, unknown, expired, revoked). */
export async function sessionOfRequest(c: Context<AppEnv>): Promise<PortalSession | undefined> {
  const token = getCookie(c, PORTAL_COOKIE);
  if (token === undefined || token.length === 0 || token.length > 128) return undefined;
  const session = await findLivePortalSession(c.get('deps').db, token);
  if (session) {
    c.set('portalSession', session);
    c.set('portalSessionToken', token);
  } else {
    // A dead cookie is dropped, so the browser stops sending it.
    deleteCookie(c, PORTAL_COOKIE, { path: '/portal' });
  }
  return session;
}

/**
 * The gate of /portal/api/*: a live session, and for every write (any method but GET and HEAD) its CSRF
 * token in `X-CSRF-Token`, compared in constant time, beyond what `SameSite=Strict` already refuses.
 * The merchant is the session's, never anything the request names.
 */
export function portalSessionGate(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const session = await sessionOfRequest(c);
    if (!session) {
      throw new AppError('AUTHENTICATION_FAILED', 'No live portal session: open a new portal link', {
        logDetail: 'portal: no live session',
      });
    }
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const sent = c.req.header(CSRF_HEADER) ?? '';
      if (!safeEqual(sent, csrfTokenOf(c.get('portalSessionToken') ?? ''))) {
        throw new AppError('FORBIDDEN', 'Missing or wrong CSRF token', { logDetail: 'portal: CSRF token refused' });
      }
    }
    await next();
  };
}

/** The session the gate let through (a route behind it reading none is a wiring mistake). */
export function portalSession(c: Context<AppEnv>): PortalSession {
  const session = c.get('portalSession');
  if (!session) throw new Error('portal route without a portal session');
  return session;
}
