import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { queueNames } from '../../src/shared/queue/job-catalogue.js';
import { serverOf, startTcpProxy, throughProxy } from '../../test/helpers/tcp-proxy.js';
import { installCleanup } from '../lib/cleanup.js';
import { BenchDatabases } from '../lib/database.js';
import { type JobStatus, MerchantClient } from '../lib/merchant-client.js';
import { ServiceGroup } from '../lib/processes.js';
import { Progress, pollUntil, sleep } from '../lib/progress.js';
import { QueueKeys } from '../lib/queue-keys.js';
import { seedMerchants } from '../lib/seed.js';

/**
 * `npm run bench:outage [-- --outage-seconds 150]`: the long Postgres outage, too long for the test
 * suite. The built API and one worker reach Postgres through a TCP proxy; 200,000 rewards are seeded;
 * 5,000 single cancels and one bulkCancelByQuery over 200,000 rewards are sent, and in the middle the
 * proxy cuts every connection and refuses new ones for the outage. Then it is restored and the run
 * waits for every job. The promises checked: both processes alive, no job failed, every reward a 200
 * promised CANCELLED under its job, counts exact, work resumed within 5 s of Postgres answering, reads
 * answered 503 within 2 s during the outage. Exits 1 if any promise fails.
 */

const USAGE = `Usage: npm run bench:outage [-- flags]
  --outage-seconds N     how long Postgres is unreachable (default 150)
  --players N            players of the bulkCancelByQuery (default 2000)
  --rewards-per-player N rewards per player (default 100)
  --single-cancels N     single cancels sent around the outage (default 5000)
  --concurrency N        clients sending single cancels (default 20)
Uses DATABASE_URL and REDIS_URL (databases and a queue prefix of its own; nothing else is touched).
`;

const root = fileURLToPath(new URL('../..', import.meta.url));
const LOG_DIR = join(root, 'bench/results/outage-logs');

interface Settings {
  outageSeconds: number;
  players: number;
  rewardsPerPlayer: number;
  singleCancels: number;
  concurrency: number;
}

function parseSettings(argv: string[]): Settings | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      'outage-seconds': { type: 'string' },
      players: { type: 'string' },
      'rewards-per-player': { type: 'string' },
      'single-cancels': { type: 'string' },
      concurrency: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return 'help';
  const count = (name: keyof typeof values, fallback: number) => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
    return n;
  };
  return {
    outageSeconds: count('outage-seconds', 150),
    players: count('players', 2_000),
    rewardsPerPlayer: count('rewards-per-player', 100),
    singleCancels: count('single-cancels', 5_000),
    concurrency: count('concurrency', 20),
  };
}

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

async function main(): Promise<number> {
  let settings: Settings | 'help';
  try {
    settings = parseSettings(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench:outage: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (settings === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const databaseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    process.stderr.write(`bench:outage needs DATABASE_URL and REDIS_URL\n${USAGE}`);
    return 2;
  }

  const progress = new Progress();
  const runId = process.pid;
  rmSync(LOG_DIR, { recursive: true, force: true });
  mkdirSync(LOG_DIR, { recursive: true });
  const services = new ServiceGroup(root, LOG_DIR);
  const databases = new BenchDatabases(databaseUrl, runId);
  const queue = new QueueKeys(redisUrl, `{bench-outage-${runId}}`);
  const proxy = await startTcpProxy(serverOf(databaseUrl));
  const cleanup = installCleanup(
    async () => {
      await services.stopAll().catch(() => {});
      await proxy.close();
      await databases.dropAll().catch(() => {});
      await queue.deleteAll().catch(() => {});
      queue.close();
      await databases.close();
    },
    () => services.killAllNow(),
    (message) => progress.step(message),
  );

  const checks: Check[] = [];
  const report: Record<string, unknown> = { settings, at: new Date().toISOString() };
  try {
    await queue.connect();
    const leftovers = await databases.dropLeftovers(isRunning);
    if (leftovers.length > 0) progress.step(`dropped databases left by killed runs: ${leftovers.join(', ')}`);
    progress.step(`creating ${databases.seedName}, migrating, seeding`);
    await databases.createSeedDatabase();
    await services.run('dist/shared/db/migrate.cli.js', [], 'migrate', {
      DATABASE_URL: databases.seedUrl,
      REDIS_URL: redisUrl,
    });
    // The query's players, plus enough players after them to give the single cancels rewards of their own.
    const singlePlayers = Math.ceil(settings.singleCancels / settings.rewardsPerPlayer);
    const [merchant] = await seedMerchants(
      services,
      { databaseUrl: databases.seedUrl, redisUrl },
      {
        merchants: 1,
        configurations: 1,
        gamesPerConfiguration: 1,
        players: settings.players + singlePlayers,
        rewardsPerPlayer: settings.rewardsPerPlayer,
        sessions: 1,
        betSlipItems: 1,
      },
      'seed',
    );
    if (!merchant) throw new Error('the seed made no merchant');
    await databases.settleSeedDatabase();
    await databases.cloneFreshLive();
    const db = new pg.Pool({ connectionString: databases.liveUrl, max: 2 });
    db.on('error', () => {});

    const players = (
      await db.query<{ player_id: string }>(
        'SELECT DISTINCT player_id FROM rewards WHERE merchant_id = $1 ORDER BY player_id',
        [merchant.id],
      )
    ).rows.map((row) => row.player_id);
    const queried = players.slice(0, settings.players);
    const singleRewards = (
      await db.query<{ id: string }>(
        'SELECT id::text FROM rewards WHERE merchant_id = $1 AND player_id = ANY($2) AND status = $3 ORDER BY id LIMIT $4',
        [merchant.id, players.slice(settings.players), 'ACTIVE', settings.singleCancels],
      )
    ).rows.map((row) => row.id);
    const queriedRewards = Number(
      (
        await db.query<{ n: string }>(
          "SELECT count(*) AS n FROM rewards WHERE merchant_id = $1 AND player_id = ANY($2) AND status = 'ACTIVE'",
          [merchant.id, queried],
        )
      ).rows[0]?.n,
    );

    const environment = {
      databaseUrl: throughProxy(databases.liveUrl, proxy),
      redisUrl,
      queuePrefix: queue.prefix,
      extra: {},
    };
    const api = await services.start('api', 'api', environment);
    const worker = await services.start('worker', 'worker', environment);
    const client = new MerchantClient(api.baseUrl, merchant);
    // A process that died (the very failure this run looks for) must end the waits at once, not after their timeouts.
    const guard = () => {
      const dead = [api, worker].filter((service) => !isRunning(service.pid)).map((service) => service.name);
      if (dead.length > 0) throw new Error(`${dead.join(' and ')} exited; see the logs in ${LOG_DIR}`);
    };
    progress.step(
      `${queriedRewards.toLocaleString('en')} rewards of ${queried.length} players for the query, ` +
        `${singleRewards.length} for single cancels; api ${api.baseUrl}, worker ${worker.baseUrl}, proxy :${proxy.port}`,
    );

    const timeline = { outageStart: 0, outageEnd: 0 };
    const singles: Array<{ rewardId: string; status: number; jobId: string | null; at: number }> = [];
    let nextSingle = 0;
    const sendSingles = async () => {
      while (nextSingle < singleRewards.length) {
        const rewardId = singleRewards[nextSingle++] as string;
        const answer = await client
          .post('/api/v1/integration/rewards/cancel', { id: rewardId })
          .catch(() => ({ status: 0, headers: new Headers(), text: '' }));
        singles.push({ rewardId, status: answer.status, jobId: answer.headers.get('x-job-id'), at: Date.now() });
        // Spread the singles over the whole run: before, during and after the outage.
        await sleep((settings.outageSeconds * 1000 * 1.5 * settings.concurrency) / singleRewards.length);
      }
    };

    const bulkJobId = await client.enqueue('/api/v1/integration/rewards/bulkCancelByQuery', { playerIds: queried });
    const senders = Array.from({ length: settings.concurrency }, sendSingles);

    // Cut in the middle of the bulk job: once a part of its work has committed.
    await pollUntil(
      async () => {
        const n = await countCancelledBy(db, bulkJobId);
        return n >= Math.min(20_000, queriedRewards / 5) ? n : undefined;
      },
      { intervalMs: 200, timeoutMs: 600_000, what: 'the bulk job to be under way' },
    );
    progress.step(`cutting Postgres for ${settings.outageSeconds} s`);
    await proxy.refuse();
    timeline.outageStart = Date.now();
    const probes: Array<{ status: number; ms: number }> = [];
    while (Date.now() - timeline.outageStart < settings.outageSeconds * 1000) {
      const sent = Date.now();
      const answer = await client
        .post('/api/v1/integration/reward-configurations/readAll', {})
        .catch(() => ({ status: 0, headers: new Headers(), text: '' }));
      probes.push({ status: answer.status, ms: Date.now() - sent });
      await sleep(1_000);
    }
    const aliveAtEnd = { api: isRunning(api.pid), worker: isRunning(worker.pid) };
    const failedDuringOutage = await failedJobCount(redisUrl, queue.prefix);
    await proxy.restore();
    timeline.outageEnd = Date.now();
    progress.step('Postgres is back; waiting for the work to resume');
    const before = await countCancelledBy(db, bulkJobId);
    const singlesBefore = await countCancelledByAnySingle(db, singleRewards);
    const resumedAt = await pollUntil(
      async () => {
        guard();
        const progressed =
          (await countCancelledBy(db, bulkJobId)) > before ||
          (await countCancelledByAnySingle(db, singleRewards)) > singlesBefore;
        return progressed ? Date.now() : undefined;
      },
      { intervalMs: 100, timeoutMs: 600_000, what: 'work to resume' },
    );
    await Promise.all(senders);

    progress.step('waiting for every job');
    const bulkStatus = await waitForJob(client, bulkJobId, guard);
    const accepted = singles.filter((s) => s.status === 200 && s.jobId);
    const singleStatuses: JobStatus[] = [];
    for (const single of accepted) singleStatuses.push(await waitForJob(client, single.jobId as string, guard));
    const failedJobs = [bulkStatus, ...singleStatuses].filter((s) => s.state === 'failed').length;
    const wrongSingles = singleStatuses.filter((s) => s.state !== 'completed' || s.result?.cancelled !== 1).length;
    const notApplied = Number(
      (
        await db.query<{ n: string }>(
          `SELECT count(*) AS n FROM unnest($1::uuid[], $2::uuid[]) AS p(reward_id, job_id)
           LEFT JOIN rewards r ON r.id = p.reward_id
           WHERE r.status IS DISTINCT FROM 'CANCELLED' OR r.cancellation_job_id IS DISTINCT FROM p.job_id`,
          [accepted.map((s) => s.rewardId), accepted.map((s) => s.jobId)],
        )
      ).rows[0]?.n,
    );
    const bulkCarried = await countCancelledBy(db, bulkJobId);
    const stillActive = Number(
      (
        await db.query<{ n: string }>(
          "SELECT count(*) AS n FROM rewards WHERE merchant_id = $1 AND player_id = ANY($2) AND status = 'ACTIVE'",
          [merchant.id, queried],
        )
      ).rows[0]?.n,
    );
    await db.end();

    const duringOutage = singles.filter((s) => s.at >= timeline.outageStart && s.at <= timeline.outageEnd);
    const resumeMs = resumedAt - timeline.outageEnd;
    const slowProbes = probes.filter((p) => p.status !== 503 || p.ms > 2_000);
    checks.push(
      {
        name: 'api and worker alive',
        ok: aliveAtEnd.api && aliveAtEnd.worker && isRunning(api.pid) && isRunning(worker.pid),
        detail: JSON.stringify(aliveAtEnd),
      },
      {
        name: 'no job failed',
        ok: failedJobs === 0 && failedDuringOutage === 0,
        detail: `${failedJobs} failed (${failedDuringOutage} during the outage)`,
      },
      {
        name: 'cancels accepted during the outage',
        ok: duringOutage.every((s) => s.status === 200) && duringOutage.length > 0,
        detail: `${duringOutage.filter((s) => s.status === 200).length} of ${duringOutage.length} answered 200`,
      },
      {
        name: 'every promised reward CANCELLED',
        ok: notApplied === 0 && stillActive === 0,
        detail: `${notApplied} single-cancel rewards not applied, ${stillActive} queried rewards still ACTIVE`,
      },
      {
        name: 'counts exact',
        ok: bulkStatus.result?.cancelled === bulkCarried && bulkCarried === queriedRewards && wrongSingles === 0,
        detail: `bulk result ${JSON.stringify(bulkStatus.result)}, ${bulkCarried} rewards carry its id, ${queriedRewards} targeted; ${wrongSingles} single results wrong`,
      },
      { name: 'resumed within 5 s of Postgres answering', ok: resumeMs <= 5_000, detail: `${resumeMs} ms` },
      {
        name: 'reads answered 503 within 2 s during the outage',
        ok: slowProbes.length === 0 && probes.length > 0,
        detail: `${probes.length - slowProbes.length} of ${probes.length}`,
      },
    );
    Object.assign(report, {
      queriedRewards,
      singlesSent: singles.length,
      singlesAccepted: accepted.length,
      singlesDuringOutage: duringOutage.length,
      resumeMs,
      bulkResult: bulkStatus.result,
      probes: {
        count: probes.length,
        maxMs: Math.max(0, ...probes.map((p) => p.ms)),
        statuses: countBy(probes.map((p) => p.status)),
      },
      logs: LOG_DIR,
    });
  } catch (error) {
    checks.push({ name: 'run finished', ok: false, detail: (error as Error).stack ?? String(error) });
  } finally {
    progress.step('cleaning up');
    await cleanup.run();
  }

  report.checks = checks;
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n\n`);
  for (const check of checks)
    process.stdout.write(`${check.ok ? 'PASS' : 'FAIL'}  ${check.name.padEnd(50)} ${check.detail}\n`);
  return checks.every((check) => check.ok) ? 0 : 1;
}

async function countCancelledBy(db: pg.Pool, jobId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM rewards WHERE cancellation_job_id = $1', [
    jobId,
  ]);
  return Number(rows[0]?.n ?? 0);
}

async function countCancelledByAnySingle(db: pg.Pool, rewardIds: readonly string[]): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    "SELECT count(*) AS n FROM rewards WHERE id = ANY($1::uuid[]) AND status = 'CANCELLED'",
    [rewardIds],
  );
  return Number(rows[0]?.n ?? 0);
}

async function waitForJob(client: MerchantClient, jobId: string, guard: () => void): Promise<JobStatus> {
  return pollUntil(
    async () => {
      guard();
      const status = await client.jobStatus(jobId).catch(() => undefined);
      return status && (status.state === 'completed' || status.state === 'failed') ? status : undefined;
    },
    { intervalMs: 500, timeoutMs: 900_000, what: `job ${jobId} to finish` },
  );
}

async function failedJobCount(redisUrl: string, prefix: string): Promise<number> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  connection.on('error', () => {});
  try {
    let failed = 0;
    for (const name of Object.values(queueNames)) {
      const queue = new Queue(name, { connection, prefix });
      failed += await queue.getFailedCount();
      await queue.close();
    }
    return failed;
  } finally {
    connection.disconnect();
  }
}

function countBy(values: readonly number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
