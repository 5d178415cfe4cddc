import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberJobId } from '../../src/shared/cancellations/member-ids.js';
import type { QueryCursor } from '../../src/shared/jobs/job-catalogue.js';
import { createConfiguration, createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { type ServiceProcess, startService } from '../helpers/processes.js';
import { queueJobHolding } from '../helpers/queue-inspection.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * SIGTERM while requests and jobs are in flight: no accepted request and no job is lost, and each
 * process exits by itself, cleanly, well within its shutdown timeout. A long job is handed back
 * with its cursor, and the next worker resumes from that cursor rather than from the start.
 */

const SHUTDOWN_TIMEOUT_MS = 15_000;
const workerEnv = { CANCEL_BATCH_SIZE: '1000', SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) };

const { env } = useTestContext();
let merchant: MerchantFixture;
let configurationId: string;
let redis: Redis;
let bulkQueue: Queue;
let singleQueue: Queue;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
  redis = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
  bulkQueue = new Queue('bulk-cancel', { connection: redis, prefix: env.queuePrefix });
  singleQueue = new Queue('cancel', { connection: redis, prefix: env.queuePrefix });
});
afterAll(async () => {
  await Promise.all(services.map((service) => service.stop('SIGKILL')));
  await bulkQueue?.close();
  await singleQueue?.close();
  redis?.disconnect();
});

async function start(kind: 'api' | 'worker', extra: Record<string, string> = {}) {
  const service = await startService(kind, env, extra);
  services.push(service);
  return service;
}

async function seedRewards(prefix: string, players: number, perPlayer: number) {
  await sql`
    INSERT INTO rewards (merchant_id, player_id, reward_configuration_id, external_id)
    SELECT ${merchant.id}::uuid, ${prefix} || '-' || p, ${configurationId}::uuid, ${prefix} || '-' || p || '-' || n
    FROM generate_series(1, ${players}) p, generate_series(1, ${perPlayer}) n
  `.execute(env.db);
}

async function timed<T>(work: Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const value = await work;
  return [value, Date.now() - started];
}

// These tests start real processes and move 100,000 rewards on a shared 2-core machine.
describe('graceful shutdown', { timeout: 120_000 }, () => {
  it('the API finishes the requests it accepted: every 200 has its job stored', async () => {
    // 20 clients in a loop may pass the default 1,000 requests a second of one merchant: every answer
    // here must be a 200, so the rate limit is off.
    const api = await start('api', { SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS), RATE_LIMIT_PER_SECOND: '0' });
    const accepted: string[] = [];
    let other = 0;
    let stopRequested = false;
    const client = async (worker: number) => {
      for (let i = 0; !stopRequested || i < 5; i++) {
        try {
          const response = await fetch(`${api.baseUrl}/api/v1/integration/rewards/cancel`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(signedBody(merchant, { externalId: `shutdown-${worker}-${i}` })),
          });
          if (response.status === 200) accepted.push(response.headers.get('x-job-id') as string);
          else other++;
        } catch {
          return; // connection refused or reset: this client was never told 200
        }
      }
    };
    const clients = Array.from({ length: 20 }, (_, worker) => client(worker));
    await eventually(async () => (accepted.length >= 200 ? true : undefined), { what: '200 accepted requests' });
    const [exit, ms] = await timed(api.stop('SIGTERM'));
    stopRequested = true;
    await Promise.all(clients);

    expect(exit).toEqual({ code: 0, signal: null });
    expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    expect(other).toBe(0);
    expect(accepted.length).toBeGreaterThanOrEqual(200);
    const stored = await Promise.all(accepted.map((jobId) => queueJobHolding([singleQueue], jobId)));
    expect(stored.filter((job) => job === undefined)).toEqual([]);
    expect(api.output()).toContain('shutdown complete');
    // Every answered request has its access line, the last ones too: the shutdown flushes the log.
    const logged = new Set(api.output().match(/(?<="jobId":")[^"]+(?=","msg":"request")/g));
    expect(accepted.filter((jobId) => !logged.has(jobId))).toEqual([]);
  });

  it('a worker stops between batches, hands its job back, and the next worker completes it exactly', async () => {
    await seedRewards('drain', 1_000, 100);
    const api = await start('api');
    const first = await start('worker', workerEnv);
    const playerIds = Array.from({ length: 1_000 }, (_, i) => `drain-${i + 1}`);
    const response = await fetch(`${api.baseUrl}/api/v1/integration/rewards/bulkCancelByQuery`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signedBody(merchant, { playerIds })),
    });
    const jobId = response.headers.get('x-job-id') as string;
    const cancelledSoFar = async () =>
      (
        await sql<{ n: number }>`SELECT count(*)::int AS n FROM rewards WHERE cancellation_job_id = ${jobId}`.execute(
          env.db,
        )
      ).rows[0]?.n ?? 0;
    await eventually(async () => ((await cancelledSoFar()) >= 5_000 ? true : undefined), {
      intervalMs: 10,
      what: 'the first batches',
    });

    const [exit, ms] = await timed(first.stop('SIGTERM'));
    expect(exit).toEqual({ code: 0, signal: null });
    expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    expect(first.output()).toContain('shutdown complete');

    // Handed back, not run to the end: the job waits in the queue with its cursor saved part-way.
    expect(['waiting', 'delayed']).toContain(await bulkQueue.getJobState(jobId));
    const handedBack = await bulkQueue.getJob(jobId);
    const cursor = handedBack?.data.cursor as QueryCursor | undefined;
    expect(cursor).toBeDefined();
    const cancelledAtHandBack = await cancelledSoFar();
    expect(cursor?.playerIndex).toBeGreaterThan(0);
    expect(cursor?.playerIndex).toBeLessThan(playerIds.length);
    expect(cursor?.cancelled).toBeGreaterThan(0);
    expect(cursor?.cancelled).toBeLessThanOrEqual(cancelledAtHandBack);
    expect(cancelledAtHandBack).toBeLessThan(100_000);

    // Probe: put the first player's rewards back to ACTIVE. The cursor is past that player, so a
    // worker that resumes there leaves them alone; one that started over would cancel them again.
    const firstPlayer = [...playerIds].sort()[0] as string;
    const reactivated = await sql`
      UPDATE rewards SET status = 'ACTIVE', cancellation_job_id = NULL, cancelled_at = NULL
      WHERE merchant_id = ${merchant.id}::uuid AND player_id = ${firstPlayer} AND cancellation_job_id = ${jobId}
    `.execute(env.db);
    expect(Number(reactivated.numAffectedRows)).toBe(100);

    await start('worker', workerEnv);
    await eventually(
      async () => {
        const state = await bulkQueue.getJobState(jobId);
        if (state === 'failed') throw new Error('job failed');
        return state === 'completed' ? true : undefined;
      },
      { timeoutMs: 60_000, what: 'the job to complete on the next worker' },
    );
    const job = await bulkQueue.getJob(jobId);
    // The count carries on from the cursor: the first worker's rewards plus the second worker's.
    expect(job?.returnvalue).toEqual({ players: 1_000, cancelled: 100_000 });
    expect(job?.attemptsMade).toBeLessThanOrEqual(1);
    // Every reward but the probe's: the second worker did not go back over the players before the cursor.
    expect(await cancelledSoFar()).toBe(100_000 - 100);
    const probe = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM rewards
      WHERE merchant_id = ${merchant.id}::uuid AND player_id = ${firstPlayer} AND status = 'ACTIVE'
    `.execute(env.db);
    expect(probe.rows[0]?.n).toBe(100);
  });

  it('a worker settles the single cancels it holds before it exits; none is lost', async () => {
    await seedRewards('single-drain', 2_000, 1);
    // As the API stores them: in batches (here 20 of 100), each request a member with an id of its own.
    const jobs = Array.from({ length: 20 }, (_, batch) => {
      const batchId = `00000000-0000-4000-8000-${String(batch + 1).padStart(8, '0')}0000`;
      const requests = Array.from({ length: 100 }, (_, member) => ({
        jobId: memberJobId(batchId, member),
        acceptedAt: Date.now(),
        externalId: `single-drain-${batch * 100 + member + 1}-1`,
      }));
      return { name: 'cancelBatch', data: { merchantId: merchant.id, requests }, opts: { jobId: batchId } };
    });
    await singleQueue.addBulk(jobs);
    const first = await start('worker', workerEnv);
    const cancelledSoFar = async () =>
      (
        await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM rewards WHERE player_id LIKE 'single-drain-%' AND status = 'CANCELLED'
        `.execute(env.db)
      ).rows[0]?.n ?? 0;
    await eventually(async () => ((await cancelledSoFar()) > 0 ? true : undefined), {
      intervalMs: 5,
      what: 'the first single cancels',
    });
    const exit = await first.stop('SIGTERM');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(await singleQueue.getFailedCount()).toBe(0);

    await start('worker', workerEnv);
    const ours = jobs.map((job) => job.opts.jobId);
    const states = async () => Promise.all(ours.map((jobId) => singleQueue.getJobState(jobId)));
    await eventually(async () => ((await states()).every((state) => state === 'completed') ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: 'the batches of all 2,000 single cancels to complete',
    });
    const remaining = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM rewards WHERE player_id LIKE 'single-drain-%' AND status = 'ACTIVE'
    `.execute(env.db);
    expect(remaining.rows[0]?.n).toBe(0);
    expect(await singleQueue.getFailedCount()).toBe(0);
  });
});
