import { OpenAPIHono, type RouteConfig, type z } from '@hono/zod-openapi';
import type { Context, Handler } from 'hono';
import { AppError } from '../../shared/errors.js';
import type { App, AppEnv } from '../context.js';
import { describeZodError, validationHook } from '../validation-hook.js';
import { requestJson } from './request-body.js';

/**
 * The app every listener and every OpenAPI document is built on: an OpenAPIHono whose routes with a
 * required JSON body are validated by `validateJsonBody` below instead of the library's own validator.
 *
 * Why: the library puts two steps in front of such a route's handler, a media-type gate and hono's
 * validator around zod's `safeParseAsync`, each an async middleware of its own; here the handler's own
 * step validates first, synchronously. The request-body
 * middleware has already checked the media type (http/json-content-type.ts) and parsed the body once,
 * and no schema here refines asynchronously; the two steps and the async parse were ~5 % of the API's
 * busy time serving readAll and ~10 % serving single cancels (profiles of 2026-11-24). The route is
 * still registered whole in the OpenAPI registry (its body documented as before) and answers bad input
 * with the same 400 as every other validation (validation-hook.ts).
 */
export function createOpenApiApp(): App {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const register = app.openapi;
  app.openapi = ((route: RouteConfig & { hide?: boolean }, handler: Handler<AppEnv>, hook: never) => {
    const schema = requiredJsonBodySchema(route);
    if (schema === undefined) return register(route, handler as never, hook);
    const { middleware, hide, ...definition } = route;
    if (!hide) app.openAPIRegistry.registerPath(definition);
    const { body: _validatedHere, ...request } = definition.request ?? {};
    // The body is validated last, as the library did: after the route's middleware (the signature) and
    // after its path, query and header validators, as part of the handler's own step.
    const validatedHandler: Handler<AppEnv> = (c, next) => {
      validateJsonBody(c, schema);
      return handler(c, next);
    };
    // Registered above already: `hide` keeps the library from registering the route a second time.
    return register({ ...definition, request, middleware, hide: true }, validatedHandler as never, hook);
  }) as typeof app.openapi;
  return app;
}

/** The schema of a route's required `application/json` body, if it has one. */
function requiredJsonBodySchema(route: RouteConfig): z.ZodType | undefined {
  const body = route.request?.body;
  if (body?.required !== true) return undefined;
  const mediaType = body.content?.['application/json'];
  const schema = mediaType !== undefined && 'schema' in mediaType ? mediaType.schema : undefined;
  return schema instanceof Object && 'safeParse' in schema ? (schema as z.ZodType) : undefined;
}

/**
 * Validates the request's JSON body (parsed once by requestJson) against the route's schema, at once,
 * and hands the result to the handler as `c.req.valid('json')`.
 */
function validateJsonBody(c: Context<AppEnv>, schema: z.ZodType): void {
  const result = schema.safeParse(requestJson(c));
  if (!result.success) throw new AppError('INVALID_REQUEST', describeZodError(result.error));
  c.req.addValidatedData('json', result.data as object);
}
