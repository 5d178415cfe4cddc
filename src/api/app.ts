import { OpenAPIHono } from '@hono/zod-openapi';
import { HTTPException } from 'hono/http-exception';
import { isDatabaseBusy, isDatabaseUnavailable } from '../shared/database-errors.js';
import { errorResponse } from '../shared/error-response.js';
import { AppError } from '../shared/errors.js';
import { registerAdminRoutes } from './admin/admin-routes.js';
import type { ApiDeps, App, AppEnv } from './context.js';
import { bodyLimitBeforeAuthentication } from './http/body-limits.js';
import { readRequestBody } from './middleware/request-body.middleware.js';
import { requestContext } from './middleware/request-context.middleware.js';
import { registerDocs } from './operations/openapi-routes.js';
import { registerOperationsRoutes } from './operations/operations-routes.js';
import { registerQueueDashboard } from './operations/queue-dashboard.js';
import type { RequestLog } from './request-logger.js';
import { registerMerchantRoutes } from './routes.js';
import { validationHook } from './validation-hook.js';

/**
 * Builds the whole HTTP application around the given dependencies. The entry point passes real
 * ones; tests pass the same kinds, pointed at their own database and queue prefix.
 */
export function createApp(deps: ApiDeps): App {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

  app.use('*', requestContext(deps));
  app.use('*', readRequestBody(bodyLimitBeforeAuthentication(deps.config)));

  registerOperationsRoutes(app);
  registerMerchantRoutes(app, deps.config.TRUST_PROXY);
  registerAdminRoutes(app);
  registerQueueDashboard(app);
  registerDocs(app);

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
    return new AppError('SERVICE_UNAVAILABLE', undefined, { retryAfterSeconds: 1, cause: error });
  }
  if (isDatabaseBusy(error)) {
    // Past the API pool's statement or lock timeout (client.ts): the connection is free again at once.
    log.warn({ err: error }, 'database statement timed out');
    return new AppError('SERVICE_UNAVAILABLE', undefined, { retryAfterSeconds: 1, cause: error });
  }
  if (error instanceof HTTPException && error.status < 500) {
    // Raised by hono itself (malformed JSON in a validator, for instance).
    return new AppError('INVALID_REQUEST', error.message || undefined, { cause: error });
  }
  log.error({ err: error }, 'unexpected error');
  return new AppError('INTERNAL_ERROR', undefined, { cause: error });
}
