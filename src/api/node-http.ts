import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';

/**
 * Node's own request and response, which @hono/node-server passes to hono as `c.env`: the API's few
 * reaches past hono's web `Request` and `Response` go through here. Each web object the adapter builds
 * on demand costs time on every request: a `Headers` from the raw header list the first time a
 * request header is read, a web `Request` with its `AbortSignal` and stream when the body is read
 * (see request-body.middleware.ts), and a `Headers` for the answer when a header is added to it after
 * it was made. Without Node's objects (hono's `app.request()` in a script) callers use the web API.
 */
interface NodeBindings {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

export function nodeRequest(c: Context): IncomingMessage | undefined {
  return (c.env as NodeBindings | undefined)?.incoming;
}

export function nodeResponse(c: Context): ServerResponse | undefined {
  return (c.env as NodeBindings | undefined)?.outgoing;
}

/** A request header by its lower-case name, as Node parsed it (repeated headers joined as Node joins them). */
export function requestHeader(c: Context, name: string): string | undefined {
  const incoming = nodeRequest(c);
  if (!incoming) return c.req.header(name);
  const value = incoming.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
