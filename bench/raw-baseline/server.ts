import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createRawBaselineApp } from './app.js';
import { storeBetSlipAnswer } from './bet-slip-query.js';
import { RAW_BASELINE_QUEUE } from './paths.js';

/**
 * The benchmark's raw HTTP baseline (bench/README.md, "HTTP"): a minimal Hono server on
 * @hono/node-server, one process, started by the bench beside the API. Configured by environment
 * only: PORT, HOST, DATABASE_URL, REDIS_URL, QUEUE_PREFIX, MERCHANT_ID and MERCHANT_SECRET (the one
 * merchant whose signature it accepts), READ_ALL_BODY_FILE (the readAll answer it serves), BET_SLIP_TOKEN and BET_SLIP_BODY_FILE (the
 * session token and the /betSlip answer it stores for it). It listens only once Postgres and Redis
 * have answered and the bet slip answer is stored, so that answering at all means ready.
 */

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`raw baseline: ${name} is required`);
  return value;
}

const port = Number(required('PORT'));
const hostname = process.env.HOST ?? '127.0.0.1';
const merchant = { id: required('MERCHANT_ID'), secretKey: required('MERCHANT_SECRET') };
// Read as bytes: encoded once, not on every answer.
const readAllBody = new Uint8Array(readFileSync(required('READ_ALL_BODY_FILE')));

// The API's default pool size (DB_POOL_SIZE), so that neither side queues for connections the other has.
const pool = new pg.Pool({ connectionString: required('DATABASE_URL'), max: 10, application_name: 'raw-baseline' });
const redis = new Redis(required('REDIS_URL'), { maxRetriesPerRequest: 1, connectionName: 'raw-baseline' });
const queue = new Queue(RAW_BASELINE_QUEUE, { connection: redis, prefix: required('QUEUE_PREFIX') });

await storeBetSlipAnswer(pool, required('BET_SLIP_TOKEN'), readFileSync(required('BET_SLIP_BODY_FILE'), 'utf8'));
await queue.waitUntilReady();

const server = serve(
  { fetch: createRawBaselineApp({ merchant, queue, pool, readAllBody }).fetch, port, hostname },
  (info) => process.stdout.write(`raw baseline listening on ${hostname}:${info.port}\n`),
);

process.once('SIGTERM', () => {
  server.close();
  void Promise.allSettled([queue.close(), pool.end()]).then(() => {
    redis.disconnect();
    process.exit(0);
  });
});
