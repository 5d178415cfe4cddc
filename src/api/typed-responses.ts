import type { Context, TypedResponse } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { JSONParsed } from 'hono/utils/types';
import type { z } from 'zod';

/**
 * Responses whose body hono cannot type by itself, typed as the route declares them, so that
 * `app.openapi` still checks each handler's status and body against its route.
 */

/**
 * 200 with an empty body: what a route whose 200 declares no content answers (the cancel routes,
 * through enqueueAndAnswer).
 *
 */
// biome-ignore lint/complexity/noBannedTypes: `{}` is how @hono/zod-openapi types a contentless response.
export type EmptyOk = Response & TypedResponse<{}, 200, string>;

export function emptyOk(c: Context): EmptyOk {
  // An empty string, not null: @hono/node-server writes a string body straight to the socket, while
  // a null body makes it build a web Response first. The wire is the same (Content-Length: 0).
  // hono types `c.body('')` as a text body; the route's contentless 200 expects `{}`.
  return c.body('', 200) as unknown as EmptyOk;
}

/**
 * The empty 200 of a route whose 200 may also be JSON (the bulk cancels: empty when queued, a dry
 * run's counts otherwise). OpenAPI gives one status one shape, so the empty answer is typed as the
 * JSON one; `schema` names that shape, as for `rawJson`.
 */
export function emptyOkAs<Schema extends z.ZodType>(
  _schema: Schema,
  response: EmptyOk,
): Response & TypedResponse<JSONParsed<z.output<Schema>>, 200, 'json'> {
  return response as unknown as Response & TypedResponse<JSONParsed<z.output<Schema>>, 200, 'json'>;
}

/**
 * JSON text that Postgres (or another trusted writer) already serialised, sent as is: re-parsing it
 * only to serialise it again would cost time and the exact decimal text of amounts. `schema` is
 * not run (that is the point); it names the shape the text has, which the route then checks
 * against what it declares. Naming it is the caller's promise, kept by the route's tests.
 */
export function rawJson<Schema extends z.ZodType, S extends ContentfulStatusCode>(
  c: Context,
  _schema: Schema,
  json: string,
  status: S,
): Response & TypedResponse<JSONParsed<z.output<Schema>>, S, 'json'> {
  c.header('Content-Type', 'application/json');
  return c.body(json, status) as unknown as Response & TypedResponse<JSONParsed<z.output<Schema>>, S, 'json'>;
}

/** Text in a media type of its own (Prometheus' exposition format), typed as the route's text body. */
export function typedText<S extends ContentfulStatusCode>(
  c: Context,
  text: string,
  status: S,
  contentType: string,
): Response & TypedResponse<string, S, 'text'> {
  c.header('Content-Type', contentType);
  return c.body(text, status) as unknown as Response & TypedResponse<string, S, 'text'>;
}
