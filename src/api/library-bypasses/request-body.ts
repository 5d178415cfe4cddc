import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { AppError, RETRY_SOON_SECONDS } from '../../shared/errors/errors.js';
import type { AppEnv } from '../context.js';
import type { BodyBudget } from '../http/body-budget.js';
import { requireJsonContentType } from '../http/json-content-type.js';
import { nodeRequest } from './node-http.js';

/** Bytes a request's body may have (http/body-limits.ts); `null`: not read here, by a later middleware. */
export type BodyLimit = (c: Context<AppEnv>) => number | null;

/**
 * Reads every request body once, as bytes, with the size limit, before any route sees it; first, the
 * body must be declared JSON (http/json-content-type.ts).
 *
 * Where the API steps around the web `Request` for the body (see node-http.ts): on Node,
 * @hono/node-server hands hono a lightweight request that becomes a real `Request` (a `Headers`, an
 * `AbortSignal`, a web `ReadableStream` over the socket) the moment anything touches its body.
 * Measured on Node 24, together with the headers read from Node (node-http.ts): the library's way cost
 * +48 % CPU per /betSlip answer, +76 % per signed cancel answer and +111 % per readAll answer,
 * for bodies of a few hundred bytes. So the bytes are read straight from Node's `IncomingMessage`,
 * then handed to hono's own body cache: `c.req.json()`, `c.req.text()` and the validators read them
 * from there as they would have read the stream, and nothing downstream knows the difference. Without a Node request (hono's
 * `app.request()` in a script) the web body is read instead, with the same limit.
 */
export function readRequestBody(limitOf: BodyLimit, budget?: BodyBudget): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const method = c.req.method;
    if (method === 'GET' || method === 'HEAD') return next();
    const limitBytes = limitOf(c);
    // Read further on, by a middleware of the route's own (http/body-limits.ts).
    if (limitBytes === null) return next();
    requireJsonContentType(c, method);
    const incoming = nodeRequest(c);
    const declared = Number(c.req.header('content-length') ?? Number.NaN);
    // Refused before a byte is read: the sender said how much is coming. What it still sends is
    // discarded by Node as it arrives (never buffered), for HTTP_REQUEST_TIMEOUT_MS at most; closing
    // the connection at once instead would make the client's kernel see a reset, often before the 413.
    if (declared > limitBytes) throw new AppError('PAYLOAD_TOO_LARGE');
    // Room in the process's budget for this body, taken before a byte is read: what it declares, or
    // the most it may bring when it declares nothing (chunked).
    const reservation = budget?.reserve(Number.isSafeInteger(declared) && declared >= 0 ? declared : limitBytes);
    if (reservation === null) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Too many request bodies in flight', {
        retryAfterSeconds: RETRY_SOON_SECONDS,
      });
    }
    let body: Uint8Array;
    try {
      body = incoming ? await readIncoming(incoming, limitBytes) : await readWebBody(c.req.raw, limitBytes);
    } finally {
      // Read, refused past the limit, or abandoned (the client went away, or Node's request timeout
      // closed the connection): the bytes are no longer in flight.
      reservation?.release();
    }
    c.set('body', body);
    bodyCache(c).arrayBuffer = Promise.resolve(body.buffer as ArrayBuffer);
    await next();
  };
}

const utf8 = new TextDecoder();

/**
 * hono types its body cache as `Partial<Body>` (the methods), but what it keeps there, and reads back
 * in `c.req.text()` and friends, are the promises those methods return.
 */
interface BodyPromises {
  arrayBuffer?: Promise<ArrayBuffer>;
}
const bodyCache = (c: Context) => c.req.bodyCache as unknown as BodyPromises;

/**
 * The body as a JSON value, parsed once per request: the merchant authentication reads its signed
 * fields from it, and the route's validator (json-body-validation.ts) this very value (for a 2 MB
 * bulk request, a second decode and parse would be milliseconds). Decoded as `Response.text()` decodes
 * (UTF-8, a leading byte-order mark dropped). Malformed JSON is a 400. Nothing mutates it: zod builds
 * new objects from what it validates.
 */
export function requestJson(c: Context<AppEnv>): unknown {
  const parsed = c.get('parsedBody');
  if (parsed !== undefined) return parsed.value;
  const text = utf8.decode(c.get('body') ?? new Uint8Array(0));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('INVALID_REQUEST', 'Malformed JSON in request body');
  }
  c.set('parsedBody', { value });
  return value;
}

/** The bytes of a Node request, refused as soon as they pass the limit (counted as they arrive, chunked or not). */
function readIncoming(incoming: IncomingMessage, limitBytes: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (outcome: () => void) => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onClose);
      incoming.off('close', onClose);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) finish(() => reject(new AppError('PAYLOAD_TOO_LARGE')));
      else chunks.push(chunk);
    };
    const onEnd = () => finish(() => resolve(joined(chunks, size)));
    // The client went away mid-body: nobody is left to answer, but the request must end.
    const onClose = () => finish(() => reject(new AppError('INVALID_REQUEST', 'Request body incomplete')));
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onClose);
    incoming.on('close', onClose);
  });
}

async function readWebBody(request: Request, limitBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    for await (const chunk of request.body) {
      size += chunk.byteLength;
      if (size > limitBytes) throw new AppError('PAYLOAD_TOO_LARGE');
      chunks.push(chunk);
    }
  }
  return joined(chunks, size);
}

/** One array of exactly `size` bytes with its own ArrayBuffer (Buffer.concat may hand out a slice of a shared pool). */
function joined(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
