import type { MiddlewareHandler } from 'hono';
import { AppError } from '../../shared/errors.js';
import { safeEqual } from '../auth/constant-time.js';
import type { AppEnv } from '../context.js';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * The gate of everything under /admin (docs/design.md §9): `Authorization: Bearer <ADMIN_TOKEN>`.
 * While ADMIN_TOKEN is unset the admin surface answers as an unknown route would, so a deployment
 * without it shows no admin API at all.
 */
export function adminAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const adminToken = c.get('deps').config.ADMIN_TOKEN;
    if (!adminToken) throw new AppError('NOT_FOUND', 'Route not found', { logDetail: 'admin API disabled' });

    const presented = BEARER.exec(c.req.header('authorization') ?? '')?.[1];
    if (presented === undefined) {
      throw new AppError('AUTHENTICATION_FAILED', undefined, { logDetail: 'no admin bearer token' });
    }
    if (!safeEqual(presented, adminToken)) {
      throw new AppError('AUTHENTICATION_FAILED', undefined, { logDetail: 'wrong admin token' });
    }
    await next();
  };
}
