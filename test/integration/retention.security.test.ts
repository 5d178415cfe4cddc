import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { Metrics } from '../../src/shared/telemetry/metrics.js';
import {
  RETENTION_LOCK_KEY,
  RetentionSweeper,
  type SweepReport,
} from '../../src/worker/retention/retention-sweeper.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

// The sweeper among other workers and under load: one replica sweeps at a time and no row is counted
// twice; on a table of 1,000,000 expired rows no lock is held long enough to make a concurrent
// transaction wait a second; a worker that stops ends its sweep after the statement in flight.

const { env } = useTestContext({ settings: { RETENTION_MS: '60000' } });
let merchant: MerchantFixture;
/** Two more pools: two worker replicas, each with its own connections. */
let replicaDbs: Db[];

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  replicaDbs = [1, 2].map((replica) =>
    createDb({ connectionString: env.databaseUrl, poolSize: 3, applicationName: `rewards-worker-${replica}` }),
  );
});
afterAll(async () => {
  await Promise.all((replicaDbs ?? []).map((db) => db.destroy()));
});

function sweeperOn(db: Db, options: { batchSize?: number; stopping?: AbortSignal; vacuum?: boolean } = {}) {
  return new RetentionSweeper({
    config: {
      ...env.config,
      RETENTION_BATCH_SIZE: options.batchSize ?? env.config.RETENTION_BATCH_SIZE,
      RETENTION_VACUUM: options.vacuum ?? env.config.RETENTION_VACUUM,
    },
    db,
    logger: createLogger({ level: 'silent', name: 'retention-test' }),
    metrics: new Metrics({ collectDefaults: false, processName: 'worker' }),
    stopping: options.stopping ?? new AbortController().signal,
  });
}

/**
 * `jobs` finished jobs (`expired`: two minutes ago, else just now), each with `bucketsPerJob` rewards
 * lists: one statement each, as a year of cancels would leave them.
 */
async function seedJobs(jobs: number, bucketsPerJob: number, expired: boolean, offset = 0): Promise<void> {
  const finishedAt = expired ? sql`now() - interval '2 minutes'` : sql`now()`;
  await sql`
    INSERT INTO cancellation_jobs (id, merchant_id, operation, state, created_at, started_at, finished_at)
    SELECT md5(${offset}::int + g || '')::uuid, ${merchant.id}::uuid, 'cancel', 'completed',
      now() - interval '3 minutes', now() - interval '3 minutes', ${finishedAt}
    FROM generate_series(1, ${jobs}) g
  `.execute(env.db);
  await sql`
    INSERT INTO job_rewards (merchant_id, job_id, bucket, first_id, reward_ids)
    SELECT ${merchant.id}::uuid, md5(${offset}::int + g || '')::uuid, b, r.id, ARRAY[r.id]
    FROM generate_series(1, ${jobs}) g, generate_series(0, ${bucketsPerJob - 1}) b, LATERAL (SELECT gen_random_uuid() AS id WHERE b >= 0) r
  `.execute(env.db);
}

async function count(table: 'cancellation_jobs' | 'job_rewards'): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(env.db);
  return Number(rows[0]?.n);
}

async function emptyJobs(): Promise<void> {
  await sql`TRUNCATE cancellation_jobs, job_rewards, job_cancel_slices`.execute(env.db);
}

function deletedOf(report: SweepReport, table: 'cancellation_jobs' | 'job_rewards'): number {
  return report.outcome === 'skipped' ? 0 : report.deleted[table];
}

describe('two worker replicas sweeping', () => {
  it('skip their turn while another holds the sweep lock', async () => {
    await emptyJobs();
    await seedJobs(50, 2, true);
    // Another replica mid-sweep: it holds the advisory lock on its session.
    await env.db.connection().execute(async (other) => {
      await sql`SELECT pg_advisory_lock(${RETENTION_LOCK_KEY}::bigint)`.execute(other);
      try {
        const reports = await Promise.all(replicaDbs.map((db) => sweeperOn(db).sweep()));
        expect(reports).toEqual([{ outcome: 'skipped' }, { outcome: 'skipped' }]);
        expect(await count('cancellation_jobs')).toBe(50);
      } finally {
        await sql`SELECT pg_advisory_unlock(${RETENTION_LOCK_KEY}::bigint)`.execute(other);
      }
    });
  });

  it('remove each expired row exactly once, one sweeping at a time', async () => {
    await emptyJobs();
    await seedJobs(3_000, 3, true);
    await seedJobs(100, 3, false, 1_000_000);
    const sweepers = replicaDbs.map((db) => sweeperOn(db, { batchSize: 50 }));
    const reports: SweepReport[] = [];
    const sweep = async (sweeper: RetentionSweeper) => {
      reports.push(await sweeper.sweep());
    };
    // Sampled while they race: sessions of this database holding an advisory lock (only the sweep's).
    let racing = true;
    let mostAtOnce = 0;
    const sampler = (async () => {
      while (racing) {
        const { rows } = await sql<{ n: string }>`
          SELECT count(*) AS n FROM pg_locks
          WHERE locktype = 'advisory' AND granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        `.execute(env.db);
        mostAtOnce = Math.max(mostAtOnce, Number(rows[0]?.n));
      }
    })();
    // Both replicas' timers fire at once, round after round, until the expired rows are gone.
    for (let round = 0; round < 20; round++) {
      await Promise.all(sweepers.map(sweep));
      if ((await count('job_rewards')) === 300) break;
    }
    racing = false;
    await sampler;

    const completed = reports.filter((report) => report.outcome === 'completed');
    expect(completed.length).toBeGreaterThanOrEqual(1);
    // Every expired row was deleted once: the counts of all sweeps add up to exactly the expired rows.
    expect(reports.reduce((sum, report) => sum + deletedOf(report, 'cancellation_jobs'), 0)).toBe(3_000);
    expect(reports.reduce((sum, report) => sum + deletedOf(report, 'job_rewards'), 0)).toBe(9_000);
    expect(await count('cancellation_jobs')).toBe(100);
    expect(await count('job_rewards')).toBe(300);
    // When both tried at the same moment, one of them skipped.
    expect(reports.some((report) => report.outcome === 'skipped')).toBe(true);
    expect(mostAtOnce).toBeLessThanOrEqual(1);
  });
});

describe('a sweep of 1,000,000 expired rows', () => {
  it('never makes a concurrent transaction wait a second for a lock', { timeout: 120_000 }, async () => {
    await emptyJobs();
    // 10,000 jobs × 100 rewards lists, finished two minutes ago; 100 fresh jobs that must stay.
    await seedJobs(10_000, 100, true);
    await seedJobs(100, 10, false, 1_000_000);
    expect(await count('job_rewards')).toBe(1_001_000);
    await sql`ANALYZE job_rewards`.execute(env.db);
    await sql`ANALYZE cancellation_jobs`.execute(env.db);

    const [sweeperDb, probeDb] = replicaDbs as [Db, Db];
    let sweeping = true;
    // Without the closing VACUUM: it takes SHARE UPDATE EXCLUSIVE, which the probe's SHARE lock below
    // waits for (a second or more over a million dead rows on a busy machine), though no statement of the
    // service's traffic does (inserts, updates and row locks take ROW EXCLUSIVE or less). The deletes are
    // what this test bounds.
    const sweep = sweeperOn(sweeperDb, { vacuum: false })
      .sweep()
      .finally(() => {
        sweeping = false;
      });

    // Meanwhile another session works on the same tables, every lock wait bounded by 1 s (lock_timeout):
    // a SHARE lock on job_rewards (it conflicts with every delete, so it waits for the sweeper's
    // transaction in flight to end), rows of an expired job read FOR UPDATE (the rows the sweeper is
    // deleting), and a fresh row inserted. A lock held over a second fails the probe.
    const probes = { share: 0, forUpdate: 0, inserted: 0 };
    let probeJob = 1;
    while (sweeping) {
      await probeDb.transaction().execute(async (trx) => {
        await sql`SET LOCAL lock_timeout = '1s'`.execute(trx);
        await sql`LOCK TABLE job_rewards IN SHARE MODE`.execute(trx);
        probes.share++;
      });
      await probeDb.transaction().execute(async (trx) => {
        await sql`SET LOCAL lock_timeout = '1s'`.execute(trx);
        await sql`
          SELECT 1 FROM job_rewards
          WHERE merchant_id = ${merchant.id}::uuid AND job_id = md5(${probeJob}::int || '')::uuid FOR UPDATE
        `.execute(trx);
        probes.forUpdate++;
        await sql`
          INSERT INTO job_rewards (merchant_id, job_id, bucket, first_id, reward_ids)
          VALUES (${merchant.id}::uuid, gen_random_uuid(), 0, gen_random_uuid(), ARRAY[gen_random_uuid()])
        `.execute(trx);
        probes.inserted++;
      });
      probeJob = (probeJob % 10_000) + 1 + 97;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const report = await sweep;

    expect(report).toMatchObject({
      outcome: 'completed',
      deleted: { cancellation_jobs: 10_000, job_rewards: 1_000_000 },
    });
    // Every probe got its locks within the second (none threw), and there were many of them.
    expect(probes.share).toBeGreaterThanOrEqual(5);
    expect(probes.inserted).toBe(probes.share);
    // The sweeper's own longest transaction, the longest it held any lock.
    expect(report.outcome === 'completed' && report.longestStatementMs).toBeLessThan(1_000);
    expect(await count('cancellation_jobs')).toBe(100);
    expect(await count('job_rewards')).toBe(1_000 + probes.inserted);
  });
});

describe('a worker shutting down', () => {
  it('ends its sweep after the statement in flight; the next sweep finishes the rest', async () => {
    await emptyJobs();
    await seedJobs(2_000, 5, true);
    const stopping = new AbortController();
    const sweeper = sweeperOn(replicaDbs[0] as Db, { batchSize: 100, stopping: stopping.signal });
    const sweep = sweeper.sweep();
    // Stop once some rows are gone.
    for (;;) {
      if ((await count('job_rewards')) < 10_000) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    stopping.abort();
    const report = await sweep;
    expect(report.outcome).toBe('stopped');
    const left = await count('job_rewards');
    expect(left).toBeGreaterThan(0);
    expect(report.outcome !== 'skipped' && report.deleted.job_rewards).toBe(10_000 - left);
    await sweeper.stop();

    const next = await sweeperOn(replicaDbs[1] as Db).sweep();
    expect(next).toMatchObject({ outcome: 'completed', deleted: { job_rewards: left } });
    expect(await count('cancellation_jobs')).toBe(0);
  });
});
