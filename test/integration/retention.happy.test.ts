import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobKey, queueNames } from '../../src/shared/redis/redis-keys.js';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { Metrics } from '../../src/shared/telemetry/metrics.js';
import { RetentionSweeper } from '../../src/worker/retention/retention-sweeper.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths, fetchJobStatus, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import {
  bet,
  createConfiguration,
  createMerchant,
  createRewards,
  createSession,
  type MerchantFixture,
} from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startTestWorker, type TestWorker } from '../helpers/worker.js';

// What the retention sweeper removes, and only that: every kind of record the service keeps for itself,
// each with rows past RETENTION_MS (one minute here) and rows that must stay. Batches of 7 rows, so that
// every statement runs many times.

const RETENTION_MS = 60_000;
const MINUTE = 60_000;

const { env } = useTestContext({ settings: { RETENTION_MS: String(RETENTION_MS), RETENTION_BATCH_SIZE: '7' } });
let merchant: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
});

function newSweeper(metrics = new Metrics({ collectDefaults: false, processName: 'worker' })) {
  const sweeper = new RetentionSweeper({
    config: env.config,
    db: env.db,
    logger: createLogger({ level: 'silent', name: 'retention-test' }),
    metrics,
    stopping: new AbortController().signal,
  });
  return { sweeper, metrics };
}

const ago = (ms: number) => new Date(Date.now() - ms);

/** A job's audit row, its rewards lists (3 buckets) and its pending slices (2), as a cancel leaves them. */
async function job(state: string, finishedAt: Date | null, id = randomUUID()): Promise<string> {
  await env.db
    .insertInto('cancellation_jobs')
    .values({
      id,
      merchant_id: merchant.id,
      operation: 'bulkCancelByQuery',
      state: state as 'completed',
      created_at: ago(10 * MINUTE),
      started_at: ago(10 * MINUTE),
      finished_at: finishedAt,
    })
    .execute();
  await sql`
    INSERT INTO job_rewards (merchant_id, job_id, bucket, first_id, reward_ids)
    SELECT ${merchant.id}::uuid, ${id}::uuid, b, gen_random_uuid(), ARRAY[gen_random_uuid()] FROM generate_series(0, 2) b
  `.execute(env.db);
  await sql`
    INSERT INTO job_cancel_slices (job_id, merchant_id, cancelled_at, player_ids)
    SELECT ${id}::uuid, ${merchant.id}::uuid, now(), ARRAY['p' || s] FROM generate_series(1, 2) s
  `.execute(env.db);
  await sql`
    INSERT INTO job_unapplied_identifiers (merchant_id, job_id, kind, identifier, outcome)
    VALUES (${merchant.id}, ${id}, 'externalId', 'gone-1', 'notFound'), (${merchant.id}, ${id}, 'id', ${id}, 'notFound')
  `.execute(env.db);
  return id;
}

async function delivery(state: 'pending' | 'delivered' | 'failed', createdAt: Date): Promise<string> {
  const id = randomUUID();
  await sql`
    INSERT INTO webhook_deliveries (id, merchant_id, type, job_id, payload, state, created_at)
    VALUES (${id}, ${merchant.id}, 'job.completed', ${randomUUID()}, '{}', ${state}, ${createdAt})
  `.execute(env.db);
  return id;
}

async function ids(table: 'cancellation_jobs' | 'webhook_deliveries' | 'sessions'): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`SELECT id::text FROM ${sql.table(table)} ORDER BY id`.execute(env.db);
  return rows.map((row) => row.id);
}

async function countOf(table: string, column: string, values: readonly string[]): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)}::text = ANY(${values}::text[])
  `.execute(env.db);
  return Number(rows[0]?.n);
}

describe('the retention sweeper', () => {
  it('removes every record older than the retention from every table, and nothing else', async () => {
    // Jobs: 20 finished longer ago than the retention (each final state), and what must stay.
    const expiredJobs: string[] = [];
    for (let index = 0; index < 20; index++) {
      expiredJobs.push(await job(['completed', 'failed', 'cancelled'][index % 3] as string, ago(2 * MINUTE)));
    }
    const keptJobs = [
      await job('completed', ago(10_000)), // finished within the retention
      await job('running', null), // still running, however old
      await job('queued', null),
      // Taken up again after an abort recorded it (running, with the earlier finished_at kept).
      await job('running', ago(2 * MINUTE)),
    ];
    // Webhook deliveries: settled and old go; recent ones stay; a pending one stays while its retries
    // may still run, and goes once it is older than any retry schedule.
    const expiredDeliveries = [
      await delivery('delivered', ago(2 * MINUTE)),
      await delivery('failed', ago(2 * MINUTE)),
      await delivery('pending', ago(8 * 24 * 60 * MINUTE)),
    ];
    const keptDeliveries = [
      await delivery('delivered', ago(10_000)),
      await delivery('pending', ago(2 * MINUTE)),
      await delivery('pending', ago(10_000)),
    ];
    // Sessions: expired longer ago than the retention go with their items; the rest stay.
    const expiredSessions: string[] = [];
    for (let index = 0; index < 10; index++) {
      const session = await createSession(env.db, {
        merchantId: merchant.id,
        playerId: `player-${index}`,
        expiresAt: ago(2 * MINUTE),
        betSlip: [bet(), bet(), bet()],
      });
      expiredSessions.push(session.sessionId);
    }
    const keptSessions = [
      (
        await createSession(env.db, {
          merchantId: merchant.id,
          playerId: 'p-a',
          expiresAt: ago(10_000),
          betSlip: [bet()],
        })
      ).sessionId,
      (await createSession(env.db, { merchantId: merchant.id, playerId: 'p-b', expiresAt: null, betSlip: [bet()] }))
        .sessionId,
      (await createSession(env.db, { merchantId: merchant.id, playerId: 'p-c', betSlip: [bet()] })).sessionId,
    ];

    // Admin audit entries: written longer ago than the retention go, recent ones stay.
    const auditAt = [ago(2 * MINUTE), ago(2 * MINUTE), ago(10_000)];
    for (const [index, createdAt] of auditAt.entries()) {
      await sql`
        INSERT INTO admin_audit_log (created_at, operator, action, target)
        VALUES (${createdAt}, 'ops', 'merchant.update', ${`audit-${index}`})
      `.execute(env.db);
    }

    const { sweeper, metrics } = newSweeper();
    const report = await sweeper.sweep();

    expect(report).toMatchObject({
      outcome: 'completed',
      deleted: {
        cancellation_jobs: 20,
        job_rewards: 60,
        job_cancel_slices: 40,
        job_unapplied_identifiers: 40,
        webhook_deliveries: 3,
        sessions: 10,
        bet_slip_items: 30,
        admin_audit_log: 2,
      },
    });
    const audit = await env.db.selectFrom('admin_audit_log').select('target').execute();
    expect(audit).toEqual([{ target: 'audit-2' }]);
    expect(await ids('cancellation_jobs')).toEqual([...keptJobs].sort());
    expect(await countOf('job_rewards', 'job_id', expiredJobs)).toBe(0);
    expect(await countOf('job_cancel_slices', 'job_id', expiredJobs)).toBe(0);
    expect(await countOf('job_rewards', 'job_id', keptJobs)).toBe(12);
    expect(await countOf('job_cancel_slices', 'job_id', keptJobs)).toBe(8);
    expect(await countOf('job_unapplied_identifiers', 'job_id', expiredJobs)).toBe(0);
    expect(await countOf('job_unapplied_identifiers', 'job_id', keptJobs)).toBe(8);
    expect(await ids('webhook_deliveries')).toEqual([...keptDeliveries].sort());
    expect(await countOf('webhook_deliveries', 'id', expiredDeliveries)).toBe(0);
    expect(await ids('sessions')).toEqual([...keptSessions].sort());
    expect(await countOf('bet_slip_items', 'session_id', expiredSessions)).toBe(0);
    expect(await countOf('bet_slip_items', 'session_id', keptSessions)).toBe(3);

    // Progress shows in /metrics.
    const exported = await metrics.registry.getMetricsAsJSON();
    const deleted = exported.find((metric) => metric.name === 'gateway_retention_deleted_total');
    expect(deleted?.values.find((value) => value.labels.table === 'job_rewards')?.value).toBe(60);
    const last = exported.find((metric) => metric.name === 'gateway_retention_last_sweep_timestamp_seconds');
    expect(last?.values[0]?.value).toBeGreaterThan(Date.now() / 1000 - 60);

    // A second sweep finds nothing more.
    expect(await sweeper.sweep()).toMatchObject({
      outcome: 'completed',
      deleted: { cancellation_jobs: 0, job_rewards: 0, webhook_deliveries: 0, sessions: 0 },
    });
  });
});

describe('a job older than the retention', () => {
  let api: TestApi;
  let worker: TestWorker;
  let configurationId: string;

  beforeAll(async () => {
    api = await startTestApi(env);
    worker = await startTestWorker(env);
    configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
  });
  afterAll(async () => {
    await worker?.close();
    await api?.close();
  });

  async function finishedJob(): Promise<string> {
    const [reward] = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [{ playerId: `player-${randomUUID()}` }],
    });
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', { ids: [reward?.id] });
    expect((await waitForJob(api, merchant, jobId)).state).toBe('completed');
    return jobId;
  }

  /** Status, rewards and the admin view of a job: their HTTP statuses. */
  async function views(jobId: string): Promise<number[]> {
    const status = await fetchJobStatus(api, merchant, jobId);
    const rewards = await api.post('/api/v1/integration/jobs/rewards', signedBody(merchant, { jobId }));
    const admin = await api.get(`/admin/v1/jobs/${jobId}`, {
      authorization: 'Bearer test-admin-token-0123456789abcdef0123',
    });
    return [status.status, rewards.status, admin.status];
  }

  it('answers 404 once it finished longer ago than the retention, though Redis still holds it', async () => {
    const jobId = await finishedJob();
    expect(await views(jobId)).toEqual([200, 200, 200]);
    // BullMQ keeps a completed job an hour: the job's hash still says when it finished. Two minutes on:
    const hash = jobKey(env.queuePrefix, queueNames.bulk, jobId);
    expect(await worker.deps.redis.exists(hash)).toBe(1);
    await worker.deps.redis.hset(hash, 'finishedOn', String(Date.now() - 2 * MINUTE));
    await sql`UPDATE cancellation_jobs SET finished_at = ${ago(2 * MINUTE)} WHERE id = ${jobId}`.execute(env.db);
    expect(await views(jobId)).toEqual([404, 404, 404]);
    const body = await (await fetchJobStatus(api, merchant, jobId)).json();
    expect(body).toEqual({ errorCode: 10, errorMessage: 'Job not found' });
  });

  it('answers 404 once the sweeper has removed its audit row and Redis has forgotten it', async () => {
    const jobId = await finishedJob();
    const kept = await finishedJob();
    await worker.deps.redis.del(jobKey(env.queuePrefix, queueNames.bulk, jobId));
    await worker.deps.redis.del(jobKey(env.queuePrefix, queueNames.bulk, kept));
    // From Postgres now, still within the retention:
    expect(await views(jobId)).toEqual([200, 200, 200]);
    await sql`UPDATE cancellation_jobs SET finished_at = ${ago(2 * MINUTE)} WHERE id = ${jobId}`.execute(env.db);

    expect(await countOf('job_rewards', 'job_id', [jobId])).toBe(1);
    expect((await newSweeper().sweeper.sweep()).outcome).toBe('completed');
    expect(await countOf('job_rewards', 'job_id', [jobId])).toBe(0);
    expect(await countOf('job_rewards', 'job_id', [kept])).toBe(1);
    expect(await countOf('cancellation_jobs', 'id', [kept])).toBe(1);
    expect(await countOf('cancellation_jobs', 'id', [jobId])).toBe(0);
    expect(await views(jobId)).toEqual([404, 404, 404]);
    // The job finished within the retention is untouched.
    expect(await views(kept)).toEqual([200, 200, 200]);
    const response = await api.post(cancelPaths.jobStatus, signedBody(merchant, { jobId: kept }));
    expect(await response.json()).toMatchObject({ jobId: kept, state: 'completed' });
  });
});
