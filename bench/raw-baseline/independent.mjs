// An independent check of the raw baseline (bench/README.md, "HTTP"): the same four routes written the
// plain way, in one file, with no code of the project or of the bench, so that a baseline made slow (or
// fast) by how the bench builds and runs it shows up as a disagreement. Same environment as server.ts.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { Queue } from 'bullmq';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import pg from 'pg';

const { PORT, HOST = '127.0.0.1', DATABASE_URL, REDIS_URL, QUEUE_PREFIX, MERCHANT_ID, MERCHANT_SECRET } = process.env;
const { READ_ALL_BODY_FILE, BET_SLIP_TOKEN, BET_SLIP_BODY_FILE } = process.env;
const readAll = readFileSync(READ_ALL_BODY_FILE); // bytes, encoded once
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10, application_name: 'independent-baseline' });
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
const queue = new Queue('independent-baseline', { connection: redis, prefix: QUEUE_PREFIX });
const digest = (token) => createHash('sha256').update(token).digest();
await pool.query(
  'CREATE TABLE IF NOT EXISTS independent_bet_slips (token_digest bytea PRIMARY KEY, body text NOT NULL)',
);
await pool.query('INSERT INTO independent_bet_slips VALUES ($1, $2) ON CONFLICT DO NOTHING', [
  digest(BET_SLIP_TOKEN),
  readFileSync(BET_SLIP_BODY_FILE, 'utf8'),
]);

// Straight from Node's request, as the API reads it: c.req.text() would build a web Request first.
const text = ({ incoming }) =>
  new Promise((resolve) => {
    const chunks = [];
    incoming.on('data', (chunk) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks).toString()));
  });

// The parsed body when it is signed by the merchant, else null.
async function signed(c) {
  let body;
  try {
    body = JSON.parse(await text(c.env));
  } catch {
    return null;
  }
  if (body?.merchantId !== MERCHANT_ID || !Number.isSafeInteger(body.timestamp) || typeof body.hash !== 'string')
    return null;
  const expected = createHmac('sha256', MERCHANT_SECRET).update(`${body.merchantId}${body.timestamp}`).digest();
  const received = Buffer.from(body.hash, 'hex');
  return received.length === expected.length && timingSafeEqual(received, expected) ? body : null;
}

const json = { 'content-type': 'application/json' };
const app = new Hono();
app.post('/raw/bare', (c) => c.json({ status: 'ok' }));
app.post('/raw/cancel', async (c) => {
  const body = await signed(c);
  if (!body) return c.body(null, 401);
  const job = await queue.add('cancel', { merchantId: MERCHANT_ID, externalId: body.externalId });
  return c.body(null, 200, { 'x-job-id': job.id });
});
app.post('/raw/bet-slip', async (c) => {
  const body = await signed(c);
  if (!body) return c.body(null, 401);
  const { rows } = await pool.query('SELECT body FROM independent_bet_slips WHERE token_digest = $1', [
    digest(body.authToken),
  ]);
  return rows[0] ? c.body(rows[0].body, 200, { ...json }) : c.body(null, 404);
});
app.post('/raw/read-all', async (c) => ((await signed(c)) ? c.body(readAll, 200, { ...json }) : c.body(null, 401)));

await queue.waitUntilReady();
const server = serve({ fetch: app.fetch, port: Number(PORT), hostname: HOST });
process.once('SIGTERM', () => server.close(() => Promise.all([queue.close(), pool.end()]).then(() => process.exit(0))));
