import type { MiddlewareHandler } from 'hono';
import { adminOperators } from '../../shared/config/config.js';
import { AppError } from '../../shared/errors/errors.js';
import type { AppEnv } from '../context.js';
import { operatorOfToken } from '../merchants/admin-operator.js';

const REALM = 'queues';

/**
 * An operator's token in front of the queue dashboard. Scripts send `Authorization: Bearer <token>`;
 * a browser cannot, so HTTP Basic is accepted too (any user name, the token as password), and a
 * refusal carries `WWW-Authenticate: Basic` so that the browser asks for it. With no operator
 * configured the dashboard does not exist (404), as the admin API.
 */
export function dashboardAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const operators = adminOperators(c.get('deps').config);
    if (operators.length === 0) throw new AppError('NOT_FOUND', 'Route not found');

    const presented = presentedToken(c.req.header('authorization'));
    const operator = presented === null ? undefined : operatorOfToken(operators, presented);
    if (!operator) {
      throw new AppError('AUTHENTICATION_FAILED', undefined, {
        logDetail: `dashboard: ${presented === null ? 'no credentials' : 'wrong token'}`,
        headers: { 'WWW-Authenticate': `Basic realm="${REALM}", charset="UTF-8"` },
      });
    }
    if (
      !isSafeMethod(c.req.method) &&
      isCrossSite(c.req.header('sec-fetch-site'), c.req.header('origin'), c.req.header('host'))
    ) {
      throw new AppError('FORBIDDEN', 'Cross-site request refused', {
        logDetail: `dashboard: cross-site write from ${c.req.header('origin') ?? 'unknown origin'}`,
      });
    }
    c.set('operator', operator.name);
    await next();
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A request that only reads: every other method to the dashboard is a write. */
export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method);
}

/**
 * A browser sends remembered Basic credentials with requests that other sites trigger, so a page
 * elsewhere could make the dashboard retry, clean or add jobs. Browsers say where a request comes
 * from (`Sec-Fetch-Site`, else `Origin`); writes from another site are refused. Scripts (curl) send
 * neither header and are not affected.
 */
function isCrossSite(fetchSite: string | undefined, origin: string | undefined, host: string | undefined): boolean {
  if (fetchSite) return fetchSite !== 'same-origin' && fetchSite !== 'none';
  if (!origin) return false;
  try {
    return new URL(origin).host !== host;
  } catch {
    return true;
  }
}

/** The token from a Bearer or Basic Authorization header, or null when there is none. */
function presentedToken(header: string | undefined): string | null {
  if (!header) return null;
  const space = header.indexOf(' ');
  if (space < 0) return null;
  const scheme = header.slice(0, space).toLowerCase();
  const value = header.slice(space + 1).trim();
  if (scheme === 'bearer') return value || null;
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 ? null : decoded.slice(colon + 1);
  }
  return null;
}
