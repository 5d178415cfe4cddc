import type { Context, TypedResponse } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { JSONParsed } from 'hono/utils/types';
import type { z } from 'zod';
import { omitDefaultContentType } from '../library-bypasses/node-http.js';

/**
 * Responses whose body hono cannot type by itself, typed as the route declares them, so that
 * `app.openapi` still checks each handler's status and body against its route.
 */

/**
 * 200 with an empty body and no Content-Type: the interface's answer to a cancel (through
 * cancel-answer.ts).
 */
// biome-ignore lint/complexity/noBannedTypes: `{}` is how @hono/zod-openapi types a contentless response.
export type EmptyOk = Response & TypedResponse<{}, 200, string>;

export function emptyOk(c: Context): EmptyOk {
  // On Node, an empty string, not null: @hono/node-server writes a string body straight to the socket
  // with Content-Length: 0, while a null body makes it build a web Response and send it chunked. The
  // adapter's default Content-Type is left out of the head (library-bypasses/node-http.ts). Without Node's objects (hono's
  // `app.request()`), a null body is what carries no Content-Type.
  // hono types `c.body('')` as a text body; the route's contentless 200 expects `{}`.
  if (!omitDefaultContentType(c)) return c.body(null, 200) as unknown as EmptyOk;
  return c.body('', 200) as unknown as EmptyOk;
}

/**
 * JSON text that Postgres (or another trusted writer) already serialised, sent as is (a string, or its
 * UTF-8 bytes when the same answer is sent many times): re-parsing it
 * only to serialise it again would cost time and the exact decimal text of amounts. `schema` is
 * not run (that is the point); it names the shape the text has, which the route then checks
 * against what it declares. Naming it is the caller's promise, kept by the route's tests.
 */
export function rawJson<Schema extends z.ZodType, S extends ContentfulStatusCode>(
  c: Context,
  _schema: Schema,
  json: string | Uint8Array<ArrayBuffer>,
  status: S,
): Response & TypedResponse<JSONParsed<z.output<Schema>>, S, 'json'> {
  c.header('Content-Type', 'application/json');
  // Two calls, as hono's overloads take a string or bytes, not their union.
  const response = typeof json === 'string' ? c.body(json, status) : c.body(json, status);
  return response as unknown as Response & TypedResponse<JSONParsed<z.output<Schema>>, S, 'json'>;
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
