import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfiguration, createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { type ServiceProcess, startService } from '../helpers/processes.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * kill -9 of a worker in the middle of a 200,000-reward bulkCancelByQuery: a new worker takes the
 * job over (its lock expires), resumes from the saved cursor, and the job completes with every
 * targeted reward CANCELLED, nothing else changed, and exact counts.
 */

const PLAYERS = 4_000;
const REWARDS_PER_PLAYER = 50;
const TARGETED = PLAYERS * REWARDS_PER_PLAYER;

// Short locks so the dead worker's jobs come back in seconds; small batches so the run is long enough to interrupt.
const workerEnv = { WORKER_LOCK_DURATION_MS: '3000', CANCEL_BATCH_SIZE: '1000', WORKER_BULK_CONCURRENCY: '2' };

const { env } = useTestContext();
let api: ServiceProcess;
let merchant: MerchantFixture;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
  // Targeted: PLAYERS × REWARDS_PER_PLAYER ACTIVE rewards. Bystanders: a USED reward per targeted
  // player, and ACTIVE rewards of players outside the request.
  await sql`
    INSERT INTO rewards (merchant_id, player_id, reward_configuration_id, external_id, status)
    SELECT ${merchant.id}::uuid, 'crash-' || lpad(p::text, 5, '0'), ${configuration.id}::uuid,
           'crash-' || p || '-' || n, 'ACTIVE'
    FROM generate_series(1, ${PLAYERS}) p, generate_series(1, ${REWARDS_PER_PLAYER}) n
  `.execute(env.db);
  await sql`
    INSERT INTO rewards (merchant_id, player_id, reward_configuration_id, status)
    SELECT ${merchant.id}::uuid, 'crash-' || lpad(p::text, 5, '0'), ${configuration.id}::uuid, 'USED'
    FROM generate_series(1, ${PLAYERS}) p
    UNION ALL
    SELECT ${merchant.id}::uuid, 'bystander-' || p, ${configuration.id}::uuid, 'ACTIVE'
    FROM generate_series(1, 500) p
  `.execute(env.db);
  await sql`ANALYZE rewards`.execute(env.db);
  api = await startService('api', env);
  services.push(api);
}, 120_000);

afterAll(async () => {
  await Promise.all(services.map((service) => service.stop('SIGKILL')));
});

async function cancelledBy(jobId: string): Promise<number> {
  const result = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM rewards WHERE cancellation_job_id = ${jobId}
  `.execute(env.db);
  return result.rows[0]?.n ?? 0;
}

describe('a worker killed mid-job', () => {
  it('loses nothing: the next worker completes the job exactly', async () => {
    const first = await startService('worker', env, workerEnv);
    services.push(first);

    const playerIds = Array.from({ length: PLAYERS }, (_, i) => `crash-${String(i + 1).padStart(5, '0')}`);
    const response = await fetch(`${api.baseUrl}/api/v1/integration/rewards/bulkCancelByQuery`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signedBody(merchant, { playerIds })),
    });
    expect(response.status).toBe(200);
    const jobId = response.headers.get('x-job-id') as string;

    // Kill -9 once real work has committed, well before the end.
    await eventually(async () => ((await cancelledBy(jobId)) >= 10_000 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 20,
      what: 'the first batches to commit',
    });
    const killed = await first.stop('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    const doneAtCrash = await cancelledBy(jobId);
    expect(doneAtCrash).toBeLessThan(TARGETED);

    const second = await startService('worker', env, workerEnv);
    services.push(second);

    const status = await eventually(
      async () => {
        const answer = await fetch(`${api.baseUrl}/api/v1/integration/jobs/status`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(signedBody(merchant, { jobId })),
        });
        const body = (await answer.json()) as { state: string; result: Record<string, number> | null };
        if (body.state === 'failed') throw new Error(`job failed: ${JSON.stringify(body)}`);
        return body.state === 'completed' ? body : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200, what: 'the job to complete on the second worker' },
    );

    expect(status.result).toEqual({ players: PLAYERS, cancelled: TARGETED });
    const byStatus = await sql<{ player_kind: string; status: string; job: string | null; n: number }>`
      SELECT split_part(player_id, '-', 1) AS player_kind, status,
             CASE WHEN cancellation_job_id IS NULL THEN NULL ELSE cancellation_job_id END AS job,
             count(*)::int AS n
      FROM rewards WHERE merchant_id = ${merchant.id}
      GROUP BY 1, 2, 3 ORDER BY 1, 2
    `.execute(env.db);
    expect(byStatus.rows).toEqual([
      { player_kind: 'bystander', status: 'ACTIVE', job: null, n: 500 },
      { player_kind: 'crash', status: 'CANCELLED', job: jobId, n: TARGETED },
      { player_kind: 'crash', status: 'USED', job: null, n: PLAYERS },
    ]);
  }, 240_000);
});
