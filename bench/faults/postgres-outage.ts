import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serverOf, startTcpProxy, throughProxy } from '../../test/helpers/tcp-proxy.js';
import type { Check } from '../lib/checks.js';
import { installCleanup } from '../lib/cleanup.js';
import { BenchDatabases } from '../lib/database.js';
import { isRunning } from '../lib/is-running.js';
import { type JobStatus, MerchantClient } from '../lib/merchant-client.js';
import { ServiceGroup } from '../lib/processes.js';
import { Progress, pollUntil, sleep } from '../lib/progress.js';
import { QueueKeys } from '../lib/queue-keys.js';
import { countNotApplied, countStillActive, seedOutageData } from './outage-data.js';
import { countCancelledBy, countCancelledByAnySingle, failedJobCount, waitForJob } from './outage-jobs.js';
import { type OutageSettings, parseSettings, OUTAGE_USAGE as USAGE } from './outage-settings.js';
import { outageVerdict, type SentSingle } from './outage-verdict.js';

/**
 * `npm run bench:outage [-- --outage-seconds 150]`: the long Postgres outage, too long for the test
 * suite. The built API and one worker reach Postgres through a TCP proxy; 200,000 rewards are seeded;
 * 5,000 single cancels and one bulkCancelByQuery over 200,000 rewards are sent, and in the middle the
 * proxy cuts every connection and refuses new ones for the outage. Then it is restored and the run
 * waits for every job. The promises checked: both processes alive, no job failed, every reward a 200
 * promised CANCELLED under its job, counts exact, work resumed within 5 s of Postgres answering, reads
 * answered 503 within 2 s during the outage. Exits 1 if any promise fails.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const LOG_DIR = join(root, 'bench/results/outage-logs');

async function main(): Promise<number> {
  let settings: OutageSettings | 'help';
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
    const { merchant, db, queried, queriedRewards, singleRewards } = await seedOutageData(
      services,
      databases,
      redisUrl,
      settings,
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
    const singles: SentSingle[] = [];
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
    const aliveAtOutageEnd = { api: isRunning(api.pid), worker: isRunning(worker.pid) };
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
    const verdict = outageVerdict({
      singles,
      accepted,
      outage: { start: timeline.outageStart, end: timeline.outageEnd },
      resumedAt,
      probes,
      aliveAtOutageEnd,
      aliveAtEnd: isRunning(api.pid) && isRunning(worker.pid),
      failedJobs: [bulkStatus, ...singleStatuses].filter((s) => s.state === 'failed').length,
      failedDuringOutage,
      notApplied: await countNotApplied(db, accepted),
      stillActive: await countStillActive(db, merchant.id, queried),
      bulk: { status: bulkStatus, carried: await countCancelledBy(db, bulkJobId), targeted: queriedRewards },
      wrongSingles: singleStatuses.filter((s) => s.state !== 'completed' || s.result?.cancelled !== 1).length,
    });
    await db.end();
    checks.push(...verdict.checks);
    Object.assign(report, verdict.figures, { logs: LOG_DIR });
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

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
