import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Context } from 'hono';

/**
 * Node's own request and response, which @hono/node-server passes to hono as `c.env`: the API's few
 * reaches past hono's web `Request` and `Response` go through here. Each web object the adapter builds
 * on demand costs time on every request: a `Headers` from the raw header list the first time a
 * request header is read, a web `Request` with its `AbortSignal` and stream when the body is read
 * (see request-body.ts), and a `Headers` for the answer when a header is added to it after
 * it was made. Without Node's objects (hono's `app.request()` in a script) callers use the web API.
 *
 * Measured on Node 24, together with request-body.ts: the library's way (hono reading the
 * body and the headers through the web `Request`) cost +48 % CPU per /betSlip answer, +76 % per signed
 * cancel answer and +111 % per readAll answer.
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

/**
 * @hono/node-server (1.x) gives every answer without a Content-Type `text/plain; charset=UTF-8`, an
 * empty one too, which then names a media type for a body it does not have (its 2.x leaves a null body
 * without one). For an answer meant to be empty, the header is left out of the head the adapter writes
 * for this request, if that head says `Content-Length: 0` (an error answered instead keeps its type).
 * Answers false without Node's objects (nothing to change).
 */
export function omitDefaultContentType(c: Context): boolean {
  const outgoing = nodeResponse(c);
  if (!outgoing) return false;
  const writeHead = outgoing.writeHead.bind(outgoing) as (...args: unknown[]) => ServerResponse;
  outgoing.writeHead = ((...args: unknown[]) => {
    // writeHead(status, headers) or writeHead(status, message, headers); the adapter passes an object.
    const headers = args.find((arg, index) => index > 0 && typeof arg === 'object' && arg !== null);
    if (headers && !Array.isArray(headers)) dropContentTypeOfEmpty(headers as OutgoingHttpHeaders);
    return writeHead(...args);
  }) as typeof outgoing.writeHead;
  return true;
}

function dropContentTypeOfEmpty(headers: OutgoingHttpHeaders): void {
  const names = Object.keys(headers);
  const length = names.find((name) => name.toLowerCase() === 'content-length');
  if (length === undefined || String(headers[length]) !== '0') return;
  for (const name of names) if (name.toLowerCase() === 'content-type') delete headers[name];
}

/**
 * hono's `c.req.header()` reads a web `Headers` that the adapter builds from the raw header list the
 * first time any header is read, and hono's validators read Content-Type through it on every
 * validated request (~3 % of the API's CPU on a signed cancel, measured 2026-11-23). Here it answers from the headers Node
 * has already parsed, with hono's contract (case-insensitive name; without one, every header by its
 * lower-case name). One difference, for malformed requests only: of a header that may appear once
 * (Content-Type, Authorization, Host…) sent twice, Node keeps the first where `Headers` joins both.
 */
export function answerHeadersFromNode(c: Context): void {
  const incoming = nodeRequest(c);
  if (!incoming) return;
  const { headers } = incoming;
  const header = (name?: string) => {
    if (name !== undefined) return joinedHeader(headers[name.toLowerCase()]);
    const all: Record<string, string> = Object.create(null);
    for (const [key, value] of Object.entries(headers)) {
      const joined = joinedHeader(value);
      if (joined !== undefined) all[key] = joined;
    }
    return all;
  };
  c.req.header = header as typeof c.req.header;
}

function joinedHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
