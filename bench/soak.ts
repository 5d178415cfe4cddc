import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Checks } from './lib/checks.js';
import { installCleanup } from './lib/cleanup.js';
import { BenchDatabases } from './lib/database.js';
import { isRunning } from './lib/is-running.js';
import { describeMachine } from './lib/machine.js';
import { round } from './lib/percentiles.js';
import { ServiceGroup } from './lib/processes.js';
import { Progress, sleep } from './lib/progress.js';
import { QueueKeys } from './lib/queue-keys.js';
import { type SoakMerchant, seedSoakMerchants } from './soak/soak-data.js';
import { countNotCancelled, waitForDrain } from './soak/soak-end-checks.js';
import type { SoakResults } from './soak/soak-figures.js';
import { evaluateFigures, formatSoakReport, minuteLine, writeSoakResults } from './soak/soak-report.js';
import { SoakSampler } from './soak/soak-sampler.js';
import { describeConfiguration, parseSoakArgs, SOAK_USAGE } from './soak/soak-settings.js';
import { summarizeSoak } from './soak/soak-summary.js';
import { TrafficMix } from './soak/traffic-mix.js';
import { registerWebhooks, WebhookSink } from './soak/webhook-sink.js';

/**
 * `npm run bench:soak [-- --minutes N]`: the steady-state mix of traffic for N minutes against the built API
 * and one worker, on a database and queue prefix of its own, sampling what must not grow (the service's
 * own tables, Redis, each process's RSS) and the latencies that must not drift. Progress on stderr, the
 * table on stdout, the figures in bench/results/soak.json. Exits 1 when a correctness check fails or the
 * soak cannot run, 2 on a bad flag; the steady-state figures are reported, never fatal.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const RESULTS_PATH = join(root, 'bench/results/soak.json');
const LOG_DIR = join(root, 'bench/results/logs/soak');
/** After the queues drain, how long the healthy merchants' last events may take to arrive. */
const WEBHOOK_GRACE_MS = 30_000;

async function main(): Promise<number> {
  let settings: ReturnType<typeof parseSoakArgs>;
  try {
    settings = parseSoakArgs(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`bench:soak: ${(error as Error).message}\n${SOAK_USAGE}`);
    return 2;
  }
  if (settings === 'help') {
    process.stdout.write(SOAK_USAGE);
    return 0;
  }
  const started = performance.now();
  const progress = new Progress();
  const runId = process.pid;
  rmSync(LOG_DIR, { recursive: true, force: true });
  mkdirSync(LOG_DIR, { recursive: true });
  const services = new ServiceGroup(root, LOG_DIR);
  const databases = new BenchDatabases(settings.databaseUrl, runId);
  const queue = new QueueKeys(settings.redisUrl, `{soak-${runId}}`);
  const redis = new Redis(settings.redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    connectionName: 'rewards-soak',
  });
  redis.on('error', () => {});
  let pool: pg.Pool | null = null;
  let sink: WebhookSink | null = null;

  const cleanup = installCleanup(
    async () => {
      const step = async (what: string, work: () => Promise<unknown>) => {
        try {
          await work();
        } catch (error) {
          progress.step(`cleanup: could not ${what}: ${(error as Error).message}`);
        }
      };
      await step('stop the services', () => services.stopAll());
      await step('close the webhook receiver', async () => sink?.close());
      await step('close the sampling pool', async () => pool?.end());
      await step('drop the soak databases', () => databases.dropAll());
      await step('delete the queue keys', () => queue.deleteAll());
      await step('close connections', async () => {
        queue.close();
        redis.disconnect();
        await databases.close();
      });
    },
    () => services.killAllNow(),
    (message) => progress.step(message),
  );

  const notes = describeConfiguration(settings);
  progress.step(
    `soak ${runId}: ${settings.minutes} min, database ${databases.liveName}, queue prefix ${queue.prefix}, ` +
      `service logs in ${LOG_DIR}`,
  );
  for (const note of notes) progress.step(`note: ${note}`);
  let results: SoakResults;
  try {
    await queue.connect();
    await redis.connect();
    const machine = describeMachine(await databases.serverVersion(), await queue.serverVersion());
    const leftovers = await databases.dropLeftovers(isRunning);
    if (leftovers.length > 0) progress.step(`dropped databases left by killed runs: ${leftovers.join(', ')}`);

    progress.step(`creating ${databases.seedName}, migrating and seeding it`);
    await databases.createSeedDatabase();
    const seedEnv = { databaseUrl: databases.seedUrl, redisUrl: settings.redisUrl };
    await services.run('dist/tools/migrate.cli.js', [], 'migrate', {
      DATABASE_URL: seedEnv.databaseUrl,
      REDIS_URL: seedEnv.redisUrl,
    });
    const merchants = await seedSoakMerchants(services, seedEnv, settings);
    progress.step(
      `seeded ${merchants.length} merchants: ${merchants.reduce((sum, m) => sum + m.idPool.length, 0).toLocaleString('en')} ` +
        `rewards for id cancels, ${merchants.reduce((sum, m) => sum + m.playerPool.length, 0).toLocaleString('en')} players for query cancels`,
    );
    await databases.settleSeedDatabase();
    await databases.cloneFreshLive();

    sink = new WebhookSink(new Set(merchants.filter((m) => m.deadReceiver).map((m) => m.id)));
    await sink.start();
    const adminToken = randomBytes(24).toString('hex');
    const environment = {
      databaseUrl: databases.liveUrl,
      redisUrl: settings.redisUrl,
      queuePrefix: queue.prefix,
      extra: {
        // Short, so that the tables reach their level within the run.
        RETENTION_MS: String(settings.retentionMs),
        // 0 switches the per-merchant rate limit off: the mix is one tenant's worth, not a flood.
        RATE_LIMIT_PER_SECOND: '0',
        ADMIN_TOKEN: adminToken,
        // The receiver listens on 127.0.0.1, which production refuses (WEBHOOK_ALLOW_PRIVATE with
        // NODE_ENV=production): `test`, as the test suites' processes, which reads no `.env` either.
        NODE_ENV: 'test',
        WEBHOOK_ALLOW_PRIVATE: 'true',
      },
    };
    progress.step('starting the API and one worker');
    const api = await services.start('api', 'api', environment);
    const worker = await services.start('worker', 'worker', environment);
    await registerWebhooks(api, adminToken, merchants, sink);
    const dead = merchants.find((m) => m.deadReceiver) as SoakMerchant;

    pool = new pg.Pool({ connectionString: databases.liveUrl, max: 3, application_name: 'rewards-soak-sampler' });
    pool.on('error', () => {});
    const traffic = new TrafficMix(api.baseUrl, merchants, settings);
    let origin = performance.now();
    const sampler = new SoakSampler(
      { pool, redis, queue, apiPid: api.pid, workerPid: worker.pid, deadMerchantId: dead.id, origin: () => origin },
      settings.sampleEverySeconds,
    );
    const trafficMs = settings.minutes * 60_000;
    progress.step(`driving the mix for ${settings.minutes} min`);
    origin = performance.now();
    sampler.start();
    await traffic.run(
      trafficMs,
      () => cleanup.started,
      (minute) => progress.step(minuteLine(minute, traffic, sampler)),
    );
    const trafficS = round((performance.now() - origin) / 1000, 1);
    await sampler.stop();
    if (cleanup.started) throw new Error('interrupted');

    const checks = new Checks();
    progress.step('traffic stopped; waiting for the cancel queues to drain');
    const drained = await waitForDrain(queue, settings.drainTimeoutMs);
    checks.expect(
      'the cancel queues drained',
      drained.ok,
      drained.ok ? `in ${drained.seconds} s` : `still ${JSON.stringify(drained.left)} after ${drained.seconds} s`,
    );
    const healthyJobs = traffic.acceptedJobs.filter((job) => job.merchantId !== dead.id);
    const expectedEvents = healthyJobs.length;
    const receivedEvents = () =>
      merchants.filter((m) => !m.deadReceiver).reduce((sum, m) => sum + (sink?.eventsOf(m.id) ?? 0), 0);
    const graceEnd = performance.now() + WEBHOOK_GRACE_MS;
    while (receivedEvents() < expectedEvents && performance.now() < graceEnd) await sleep(500);
    const afterDrain = await sampler.sample();

    progress.step(
      `checking ${traffic.acceptedRewardIds.length.toLocaleString('en')} rewards and ` +
        `${traffic.acceptedPlayers.length.toLocaleString('en')} players answered 200`,
    );
    const notCancelled = await countNotCancelled(pool, traffic);
    checks.expect(
      'every reward answered 200 ends CANCELLED',
      notCancelled === 0,
      notCancelled === 0
        ? `${traffic.acceptedRewardIds.length} by id and the rewards of ${traffic.acceptedPlayers.length} players, all CANCELLED`
        : `${notCancelled} not CANCELLED`,
    );

    const partial = summarizeSoak({
      settings,
      machine,
      notes,
      traffic,
      samples: sampler.samples,
      afterDrain,
      trafficS,
      arrivals: merchants.filter((m) => !m.deadReceiver).flatMap((m) => sink?.arrivals.get(m.id) ?? []),
      webhookEvents: { expected: expectedEvents, received: receivedEvents() },
      dead: {
        merchantId: dead.id,
        acceptedJobs: traffic.acceptedJobs.length - healthyJobs.length,
        refusedAttempts: sink.refused.get(dead.id) ?? 0,
      },
      checks: checks.all,
    });
    results = { ...partial, figures: evaluateFigures(partial) };
  } finally {
    progress.step('cleaning up: stopping the services, dropping the databases, deleting the queue keys');
    await cleanup.run();
  }

  results.durationSeconds = Math.round((performance.now() - started) / 1000);
  writeSoakResults(RESULTS_PATH, results);
  process.stdout.write(`${formatSoakReport(results)}\n`);
  progress.step(`results written to ${RESULTS_PATH}`);
  return results.checks.every((check) => check.ok) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `bench:soak failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
