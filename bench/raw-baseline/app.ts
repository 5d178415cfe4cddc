import type { IncomingMessage } from 'node:http';
import type { Queue } from 'bullmq';
import { type Context, Hono } from 'hono';
import type pg from 'pg';
import { findBetSlipBody } from './bet-slip-query.js';
import { RAW_BASELINE_PATHS } from './paths.js';
import { type VerifyingMerchant, verifySignedBody } from './signed-body.js';

export interface RawBaselineDeps {
  merchant: VerifyingMerchant;
  queue: Queue;
  pool: pg.Pool;
  /** The fixed readAll answer, encoded once. */
  readAllBody: Uint8Array;
}

const BARE_BODY = new TextEncoder().encode('{"status":"ok"}');

/**
 * A JSON answer, with a header object of its own each time: @hono/node-server writes the
 * Content-Length into the object it is given, so a shared one would carry the first answer's length.
 */
function jsonAnswer(c: Context, body: string | Uint8Array): Response {
  return c.body(body as Uint8Array<ArrayBuffer>, 200, { 'content-type': 'application/json' });
}

/**
 * The body as text, read from Node's request as the API reads it (src/api/library-bypasses/request-body.ts).
 * `c.req.text()` would first turn @hono/node-server's light request into a web `Request` (a `Headers`, an
 * `AbortSignal`, a web stream over the socket): about a tenth of this server's CPU per signed request in
 * `node --cpu-prof` profiles (2026-11-24), work the API does not do, which would make the floor too low.
 */
function bodyText(c: Context): Promise<string> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) return c.req.text();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    incoming.once('error', reject);
  });
}

/**
 * Each route does the least its API route must (parse, check the signature, its one piece of I/O)
 * and nothing else: no middleware, no validation library, no logging, no metrics. What the API
 * costs beyond these is what the framework and its middleware cost.
 */
export function createRawBaselineApp(deps: RawBaselineDeps): Hono {
  const { merchant, queue, pool, readAllBody } = deps;
  const app = new Hono();

  // The body is deliberately not read; the answer is /healthz's.
  app.post(RAW_BASELINE_PATHS.bare, (c) => jsonAnswer(c, BARE_BODY));

  app.post(RAW_BASELINE_PATHS.cancel, async (c) => {
    const verdict = verifySignedBody(await bodyText(c), merchant);
    if ('status' in verdict) return c.body(null, verdict.status);
    const { externalId } = verdict.fields;
    if (typeof externalId !== 'string') return c.body(null, 400);
    const job = await queue.add('cancel', { merchantId: merchant.id, externalId });
    return c.body(null, 200, { 'x-job-id': job.id ?? '' });
  });

  app.post(RAW_BASELINE_PATHS.betSlip, async (c) => {
    const verdict = verifySignedBody(await bodyText(c), merchant);
    if ('status' in verdict) return c.body(null, verdict.status);
    const { authToken } = verdict.fields;
    if (typeof authToken !== 'string') return c.body(null, 400);
    const body = await findBetSlipBody(pool, authToken);
    return body === undefined ? c.body(null, 404) : jsonAnswer(c, body);
  });

  app.post(RAW_BASELINE_PATHS.readAll, async (c) => {
    const verdict = verifySignedBody(await bodyText(c), merchant);
    if ('status' in verdict) return c.body(null, verdict.status);
    return jsonAnswer(c, readAllBody);
  });

  return app;
}
