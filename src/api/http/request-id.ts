import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import type { AppEnv } from '../context.js';
import { nodeResponse } from '../library-bypasses/node-http.js';
import { RequestLogger } from './request-logger.js';

/** A caller's id is kept when it is short and plain enough to put in a log line; else we make one. */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives the request its id (the caller's `X-Request-Id` when acceptable) and its logger, and puts the id
 * on the answer. Called by the request-context middleware before anything else runs; the returned
 * function finishes the answer's header once the handlers are done.
 */
export function assignRequestId(c: Context<AppEnv>): () => void {
  const given = c.req.header('x-request-id');
  const id = given && ACCEPTABLE_REQUEST_ID.test(given) ? given : randomUUID();
  c.set('requestId', id);
  c.set('logger', new RequestLogger(c.get('deps').logger, { requestId: id }));
  // On Node's response, whose own headers Node merges into whatever answer is written (a handler's,
  // or onError's for a thrown error), without hono building a Headers object for the answer.
  const outgoing = nodeResponse(c);
  outgoing?.setHeader('X-Request-Id', id);
  return outgoing ? noHeaderLeft : () => c.res.headers.set('X-Request-Id', id);
}

const noHeaderLeft = () => {};
