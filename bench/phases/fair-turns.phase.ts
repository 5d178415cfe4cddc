import type pg from 'pg';
import type { FairTurnsRun, FairTurnsSizes } from '../figures/fair-turns.js';
import { BULK_CANCEL_BY_QUERY_PATH, BULK_CANCEL_PATH } from '../lib/api-paths.js';
import type { Checks } from '../lib/checks.js';
import { waitForJobs } from '../lib/job-waiter.js';
import { loadAverage1m } from '../lib/machine.js';
import { MerchantClient } from '../lib/merchant-client.js';
import type { SeededMerchant } from '../lib/seed.js';
import { seeded } from './context.js';
import type { PhaseKit } from './phase-kit.js';
import { type Phase, phase } from './runner.js';

const playerWidth = (sizes: FairTurnsSizes) => String(sizes.jobs * sizes.playersPerJob - 1).length;

/** A's players are a-00000 … (jobs × playersPerJob − 1), each with rewardsPerPlayer rewards; B has b-1 … b-bIds. */
function playerId(sizes: FairTurnsSizes, index: number): string {
  return `a-${String(index).padStart(playerWidth(sizes), '0')}`;
}

/** Inserts both merchants' ACTIVE rewards, set-based, into the phase's copy of the database. */
async function seedFairTurns(
  db: pg.Pool,
  merchantA: SeededMerchant,
  merchantB: SeededMerchant,
  sizes: FairTurnsSizes,
): Promise<void> {
  const [configurationA] = merchantA.configurationIds;
  const [configurationB] = merchantB.configurationIds;
  if (!configurationA || !configurationB) throw new Error('fair turns: the seeded merchants have no configuration');
  await db.query(
    `INSERT INTO rewards (merchant_id, reward_configuration_id, player_id, external_id, status)
     SELECT $1::uuid, $2::uuid, 'a-' || lpad(p::text, $3::int, '0'), 'a-' || p || '-' || n, 'ACTIVE'
     FROM generate_series(0, $4::int - 1) AS p, generate_series(1, $5::int) AS n`,
    [merchantA.id, configurationA, playerWidth(sizes), sizes.jobs * sizes.playersPerJob, sizes.rewardsPerPlayer],
  );
  await db.query(
    `INSERT INTO rewards (merchant_id, reward_configuration_id, player_id, external_id, status)
     SELECT $1::uuid, $2::uuid, 'b-player', 'b-' || n, 'ACTIVE' FROM generate_series(1, $3::int) AS n`,
    [merchantB.id, configurationB, sizes.bIds],
  );
  await db.query('ANALYZE rewards');
}

/**
 * Merchant A queues `jobs` bulkCancelByQuery jobs, one request after the other; then merchant B sends
 * one bulkCancel of `bIds` ids and its job is polled until completed; then every job of A. Checked:
 * B's counts, each of A's jobs' counts, and the rewards in the database.
 */
async function measureFairTurns(
  db: pg.Pool,
  clientA: MerchantClient,
  clientB: MerchantClient,
  sizes: FairTurnsSizes,
  options: { pollIntervalMs: number; timeoutMs: number },
  checks: Checks,
): Promise<FairTurnsRun> {
  const label = 'fair turns';
  const aStartedAt = Date.now();
  const aJobIds: string[] = [];
  for (let job = 0; job < sizes.jobs; job++) {
    const playerIds = Array.from({ length: sizes.playersPerJob }, (_, index) =>
      playerId(sizes, job * sizes.playersPerJob + index),
    );
    aJobIds.push(await clientA.enqueue(BULK_CANCEL_BY_QUERY_PATH, { playerIds }));
  }
  const aSendMs = Date.now() - aStartedAt;

  const bSentAt = Date.now();
  const bJobId = await clientB.enqueue(BULK_CANCEL_PATH, {
    externalIds: Array.from({ length: sizes.bIds }, (_, index) => `b-${index + 1}`),
  });
  const bFinished = (await waitForJobs(clientB, [bJobId], { ...options, label: `${label}, B` })).get(bJobId);
  const bLatencyMs = (bFinished?.seenAt ?? Date.now()) - bSentAt;
  const aFinished = await waitForJobs(clientA, aJobIds, { ...options, label: `${label}, A` });

  const bStatus = bFinished?.status;
  let valid = checks.equal(`${label}: B's job state`, bStatus?.state, 'completed');
  valid =
    checks.equal(
      `${label}: B's job counts`,
      sortedJson(bStatus?.result ?? null),
      sortedJson({ requested: sizes.bIds, cancelled: sizes.bIds, alreadyCancelled: 0, notCancellable: 0, notFound: 0 }),
    ) && valid;
  let exact = 0;
  let firstWrong: string | null = null;
  const aFinishedAt: number[] = [];
  for (const jobId of aJobIds) {
    const status = aFinished.get(jobId)?.status;
    if (status?.finishedAt != null) aFinishedAt.push(status.finishedAt);
    const ok =
      status?.state === 'completed' &&
      status.result?.players === sizes.playersPerJob &&
      status.result.cancelled === sizes.playersPerJob * sizes.rewardsPerPlayer;
    if (ok) exact += 1;
    else firstWrong ??= `${jobId}: ${status?.state} ${JSON.stringify(status?.result ?? null)}`;
  }
  valid =
    checks.expect(
      `${label}: A's jobs completed with players ${sizes.playersPerJob} and cancelled ${sizes.playersPerJob * sizes.rewardsPerPlayer}`,
      exact === sizes.jobs,
      `${exact} of ${sizes.jobs}${firstWrong ? `; first other: ${firstWrong}` : ''}`,
    ) && valid;

  const aRewards = sizes.jobs * sizes.playersPerJob * sizes.rewardsPerPlayer;
  const { rows } = await db.query<{ a_by_jobs: number; a_active: number; b_by_job: number }>(
    `SELECT count(*) FILTER (WHERE merchant_id = $1 AND status = 'CANCELLED' AND cancellation_job_id = ANY($3::uuid[]))::int AS a_by_jobs,
            count(*) FILTER (WHERE merchant_id = $1 AND status = 'ACTIVE')::int AS a_active,
            count(*) FILTER (WHERE merchant_id = $2 AND status = 'CANCELLED' AND cancellation_job_id = $4::uuid)::int AS b_by_job
     FROM rewards WHERE merchant_id IN ($1, $2)`,
    [clientA.merchant.id, clientB.merchant.id, aJobIds, bJobId],
  );
  valid = checks.equal(`${label}: A's rewards cancelled by A's jobs`, rows[0]?.a_by_jobs, aRewards) && valid;
  valid = checks.equal(`${label}: A's rewards still ACTIVE`, rows[0]?.a_active, 0) && valid;
  valid = checks.equal(`${label}: B's rewards cancelled by B's job`, rows[0]?.b_by_job, sizes.bIds) && valid;

  const bFinishedAt = bStatus?.finishedAt ?? null;
  return {
    ...sizes,
    aRewards,
    bLatencyMs,
    bFinishedAfterMs: bFinishedAt === null ? null : bFinishedAt - bSentAt,
    aJobsFinishedBeforeB: bFinishedAt === null ? 0 : aFinishedAt.filter((at) => at < bFinishedAt).length,
    aSendMs,
    aJobsMs: aFinishedAt.length === sizes.jobs ? Math.max(...aFinishedAt) - aStartedAt : null,
    bResult: bStatus?.result ?? null,
    valid,
    loadAverage1m: loadAverage1m(),
  };
}

/** Counts as JSON with the keys in order, so that two results compare equal whatever their key order. */
function sortedJson(counts: Record<string, number> | null): string {
  return counts === null ? 'null' : JSON.stringify(Object.fromEntries(Object.entries(counts).sort()));
}

/** Merchant A's many bulk jobs, then merchant B's one: B must not wait for all of A's. */
export function fairTurnsPhase({ context, data, measured, startApi, startWorker }: PhaseKit): Phase {
  const { settings, progress, checks } = context;
  const sizes = settings.fairTurns;
  return phase(
    'fair-turns',
    `fair turns: ${sizes.jobs} bulkCancelByQuery jobs of ${sizes.playersPerJob} players, then another merchant's bulkCancel`,
    async (db) => {
      const merchantA = seeded(data.tenantA, 'fair turns A');
      const merchantB = seeded(data.tenantB, 'fair turns B');
      const aRewards = sizes.jobs * sizes.playersPerJob * sizes.rewardsPerPlayer;
      progress.step(`inserting ${aRewards} rewards of merchant A and ${sizes.bIds} of merchant B`);
      await seedFairTurns(db, merchantA, merchantB, sizes);
      const api = await startApi('api-fair-turns');
      await startWorker('worker-fair-turns');
      const run = await measureFairTurns(
        db,
        new MerchantClient(api.baseUrl, merchantA),
        new MerchantClient(api.baseUrl, merchantB),
        sizes,
        { pollIntervalMs: settings.pollIntervalMs, timeoutMs: settings.runTimeoutMs },
        checks,
      );
      measured.fairTurns = run;
      progress.step(
        `fair turns: B completed ${run.bLatencyMs} ms after its request (${run.aJobsFinishedBeforeB} of A's jobs ` +
          `finished before it); A's ${run.jobs} jobs took ${run.aJobsMs} ms`,
      );
    },
  );
}
