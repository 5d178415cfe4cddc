import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { isDatabaseUnavailable } from '../shared/database-errors.js';
import { AppError, errorBody } from '../shared/errors.js';
import { registerAdminRoutes } from './admin/admin-routes.js';
import type { ApiDeps, App, AppEnv } from './context.js';
import { accessLog } from './middleware/access-log.middleware.js';
import { requireJsonContentType } from './middleware/json-content-type.middleware.js';
import { requestId } from './middleware/request-id.middleware.js';
import { registerDocs } from './operations/openapi-routes.js';
import { registerOperationsRoutes } from './operations/operations-routes.js';
import { registerQueueDashboard } from './operations/queue-dashboard.js';
import { registerMerchantRoutes } from './routes.js';
import { validationHook } from './validation-hook.js';

/**
 * Builds the whole HTTP application around the given dependencies. The entry point passes real
 * ones; tests pass the same kinds, pointed at their own database and queue prefix.
 */
export function createApp(deps: ApiDeps): App {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

  app.use('*', async (c, next) => {
    c.set('deps', deps);
    await next();
  });
  app.use('*', requestId());
  app.use('*', accessLog());
  app.use('*', requireJsonContentType());
  app.use(
    '*',
    bodyLimit({
      maxSize: deps.config.BODY_LIMIT_BYTES,
      onError: () => {
        throw new AppError('PAYLOAD_TOO_LARGE');
      },
    }),
  );

  registerOperationsRoutes(app);
  registerMerchantRoutes(app, deps.config.TRUST_PROXY);
  registerAdminRoutes(app);
  registerQueueDashboard(app);
  registerDocs(app);

  app.notFound(() => {
    throw new AppError('NOT_FOUND', 'Route not found');
  });

  // The one place an error becomes a response. Nothing but the catalogue's fields leaves here.
  app.onError((error, c) => {
    if (error instanceof AppError) {
      if (error.retryAfterSeconds !== undefined) c.header('Retry-After', String(error.retryAfterSeconds));
      const log = c.var.logger ?? deps.logger;
      if (error.status >= 500) log.error({ err: error.cause ?? error, detail: error.logDetail }, error.message);
      else if (error.logDetail) log.info({ errorName: error.errorName, detail: error.logDetail }, 'request refused');
      return c.json(error.toBody(), error.status);
    }
    if (isDatabaseUnavailable(error)) {
      (c.var.logger ?? deps.logger).error({ err: error }, 'database unavailable');
      c.header('Retry-After', '1');
      return c.json(errorBody('SERVICE_UNAVAILABLE'), 503);
    }
    if (error instanceof HTTPException && error.status < 500) {
      // Raised by hono itself (malformed JSON in a validator, for instance).
      return c.json(errorBody('INVALID_REQUEST', error.message || undefined), 400);
    }
    (c.var.logger ?? deps.logger).error({ err: error }, 'unexpected error');
    return c.json(errorBody('INTERNAL_ERROR'), 500);
  });

  return app;
}
