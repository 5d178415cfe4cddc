import type { MiddlewareHandler } from 'hono';
import { adminOperators } from '../../shared/config/config.js';
import { AppError } from '../../shared/errors/errors.js';
import type { AppEnv } from '../context.js';
import { operatorOfToken } from './admin-operator.js';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * The gate of the admin API (docs/design.md, "Admin plane"): `Authorization: Bearer <token>` of one of
 * the operators (ADMIN_TOKENS, ADMIN_TOKEN). The operator's name is kept for the audit log. While no
 * operator is configured the admin surface answers as an unknown route would.
 */
export function adminAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const operators = adminOperators(c.get('deps').config);
    if (operators.length === 0) throw new AppError('NOT_FOUND', 'Route not found', { logDetail: 'admin API disabled' });

    const presented = BEARER.exec(c.req.header('authorization') ?? '')?.[1];
    if (presented === undefined) {
      throw new AppError('AUTHENTICATION_FAILED', undefined, { logDetail: 'no admin bearer token' });
    }
    const operator = operatorOfToken(operators, presented);
    if (!operator) throw new AppError('AUTHENTICATION_FAILED', undefined, { logDetail: 'wrong admin token' });
    c.set('operator', operator.name);
    await next();
  };
}
