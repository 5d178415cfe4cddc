import { HTTPException } from 'hono/http-exception';
import { isDatabaseBusy, isDatabaseUnavailable } from '../shared/db/database-errors.js';
import { errorResponse } from '../shared/errors/error-response.js';
import { AppError, RETRY_SOON_SECONDS } from '../shared/errors/errors.js';
import { BULK_ROUTE_PATHS } from './cancellations/bulk-cancel-route.js';
import type { ApiDeps, App } from './context.js';
import { adminSecurityHeaders } from './http/admin-security-headers.js';
import { bodyLimitBeforeAuthentication } from './http/body-limits.js';
import { requestContext } from './http/request-context.middleware.js';
import type { RequestLog } from './http/request-logger.js';
import { createOpenApiApp } from './library-bypasses/json-body-validation.js';
import { readRequestBody } from './library-bypasses/request-body.js';
import { registerAdminRoutes } from './merchants/admin-routes.js';
import { registerAdminDocs, registerMerchantDocs } from './operations/openapi-routes.js';
import { registerHealthRoutes, registerMetricsRoute } from './operations/operations-routes.js';
import { registerQueueDashboard } from './operations/queue-dashboard.js';
import { registerPortal } from './portal/portal-routes.js';
import { registerMerchantRoutes } from './routes.js';

/**
 * The merchants' listener (PORT): the merchant routes, health, their reference, and the merchant portal. Nothing of the
 * admin plane answers here, not even with a 401: its paths are unknown routes (404). The entry point
 * passes real dependencies; tests pass the same kinds, pointed at their own database and queue prefix.
 */
export function createApp(deps: ApiDeps): App {
  return newApp(deps, (app) => {
    registerHealthRoutes(app);
    registerMerchantRoutes(app, deps.config.TRUST_PROXY);
    registerMerchantDocs(app);
    registerPortal(app);
  });
}

/**
 * The admin listener (ADMIN_PORT): the admin API, the queue dashboard, /metrics and their reference,
 * every answer with the admin security headers. Meant for the operators' network only.
 */
export function createAdminApp(deps: ApiDeps): App {
  return newApp(deps, (app) => {
    app.use('*', adminSecurityHeaders());
    registerHealthRoutes(app);
    registerMetricsRoute(app);
    registerAdminRoutes(app);
    registerQueueDashboard(app);
    registerAdminDocs(app);
  });
}

/** What both listeners share: request context, body limits, the one exit for errors. */
function newApp(deps: ApiDeps, registerRoutes: (app: App) => void): App {
  const app = createOpenApiApp();

  app.use('*', requestContext(deps));
  app.use('*', readRequestBody(bodyLimitBeforeAuthentication(deps.config, BULK_ROUTE_PATHS), deps.bodyBudget));

  registerRoutes(app);

  app.notFound(() => {
    throw new AppError('NOT_FOUND', 'Route not found');
  });

  // The one place an error becomes a response. Nothing but the catalogue's fields leaves here.
  app.onError((error, c) => errorResponse(c, asAppError(error, c.get('logger') ?? deps.logger)));

  return app;
}

/** Logs the error as it deserves and says what the client is told. */
function asAppError(error: Error, log: RequestLog): AppError {
  if (error instanceof AppError) {
    if (error.status >= 500) log.error({ err: error.cause ?? error, detail: error.logDetail }, error.message);
    else if (error.logDetail) log.info({ errorName: error.errorName, detail: error.logDetail }, 'request refused');
    return error;
  }
  if (isDatabaseUnavailable(error)) {
    log.error({ err: error }, 'database unavailable');
    return new AppError('SERVICE_UNAVAILABLE', undefined, { retryAfterSeconds: RETRY_SOON_SECONDS, cause: error });
  }
  if (isDatabaseBusy(error)) {
    // Past the API pool's statement or lock timeout (client.ts): the connection is free again at once.
    log.warn({ err: error }, 'database statement timed out');
    return new AppError('SERVICE_UNAVAILABLE', undefined, { retryAfterSeconds: RETRY_SOON_SECONDS, cause: error });
  }
  if (error instanceof HTTPException && error.status < 500) {
    // Raised by hono itself (malformed JSON in a validator, for instance).
    return new AppError('INVALID_REQUEST', error.message || undefined, { cause: error });
  }
  log.error({ err: error }, 'unexpected error');
  return new AppError('INTERNAL_ERROR', undefined, { cause: error });
}
