import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Checks } from './lib/checks.js';
import { installCleanup } from './lib/cleanup.js';
import { BenchDatabases } from './lib/database.js';
import { describeMachine } from './lib/machine.js';
import { percentile, round } from './lib/percentiles.js';
import { type RunningService, ServiceGroup } from './lib/processes.js';
import { Progress, pollUntil, sleep } from './lib/progress.js';
import { QueueKeys } from './lib/queue-keys.js';
import { type SoakMerchant, seedSoakMerchants } from './soak/soak-data.js';
import {
  evaluateFigures,
  formatSoakReport,
  growthOverLastThird,
  kindFigures,
  latenciesBetween,
  latencyFigures,
  MIN_MINUTES_FOR_FIGURES,
  perMinute,
  type SoakResults,
  slopePerMinute,
  writeSoakResults,
} from './soak/soak-report.js';
import { SoakSampler } from './soak/soak-sampler.js';
import { parseSoakArgs, SOAK_USAGE, type SoakSettings } from './soak/soak-settings.js';
import { REQUEST_KINDS, TrafficMix } from './soak/traffic-mix.js';
import { WebhookSink } from './soak/webhook-sink.js';

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
const CANCEL_QUEUES = ['cancel', 'bulk-cancel'];
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
    await services.run('dist/shared/db/migrate.cli.js', [], 'migrate', {
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

    const requests = Object.fromEntries(
      REQUEST_KINDS.map((kind) => [kind, kindFigures(traffic.records[kind])]),
    ) as SoakResults['requests'];
    const thirdFromS = (trafficS * 2) / 3;
    const minuteTwo = percentile(latenciesBetween(traffic.records.singleCancel, 60, 120), 99);
    const lastThird = percentile(latenciesBetween(traffic.records.singleCancel, thirdFromS, trafficS), 99);
    const delays = merchants
      .filter((m) => !m.deadReceiver)
      .flatMap((m) => sink?.arrivals.get(m.id) ?? [])
      .map((arrival) => arrival.delayMs);
    const trafficSamples = sampler.samples.filter((sample) => sample !== afterDrain);
    const firstSample = trafficSamples[0];
    const lastTrafficSample = trafficSamples.at(-1);
    const acceptedRewards =
      traffic.acceptedRewardIds.length + traffic.acceptedPlayers.length * settings.rewardsPerPlayer;
    const deadWindow = trafficSamples.filter((sample) => sample.atS >= thirdFromS);
    const partial: Omit<SoakResults, 'figures'> = {
      at: new Date().toISOString(),
      minutes: settings.minutes,
      durationSeconds: 0,
      machine,
      settings,
      notes,
      requests,
      perMinute: perMinute(traffic.records, settings.minutes),
      singleCancelP99: {
        minuteTwoMs: minuteTwo === null ? null : round(minuteTwo, 1),
        lastThirdMs: lastThird === null ? null : round(lastThird, 1),
        ratio: minuteTwo && lastThird !== null && settings.minutes >= 2 ? round(lastThird / minuteTwo, 2) : null,
      },
      acceptedRewards,
      growth: growthOverLastThird(trafficSamples, trafficS),
      ownBytesPerAcceptedReward:
        firstSample && lastTrafficSample && acceptedRewards > 0
          ? Math.round(((lastTrafficSample.ownTablesMiB - firstSample.ownTablesMiB) * 1024 * 1024) / acceptedRewards)
          : null,
      webhooks: {
        expected: expectedEvents,
        received: receivedEvents(),
        p50DelayMs: percentile(delays, 50),
        p99DelayMs: percentile(delays, 99),
        maxDelayMs: delays.length > 0 ? Math.max(...delays) : null,
        over10s: delays.filter((delay) => delay > 10_000).length,
      },
      deadReceiver: {
        merchantId: dead.id,
        acceptedJobs: traffic.acceptedJobs.length - healthyJobs.length,
        refusedAttempts: sink.refused.get(dead.id) ?? 0,
        pendingDeliveriesAtEnd: afterDrain.deadPendingDeliveries,
        webhookQueueAtEnd: afterDrain.webhookQueue,
        pendingPerMinuteLastThird: slopePerMinute(
          deadWindow.map((sample) => ({ atS: sample.atS, value: sample.deadPendingDeliveries })),
        ),
      },
      samples: sampler.samples,
      checks: checks.all,
    };
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

/** What the run's configuration means for its figures, said in the output and the JSON. */
function describeConfiguration(settings: SoakSettings): string[] {
  const notes = [`RETENTION_MS=${settings.retentionMs} passed to the services`];
  if (settings.minutes < MIN_MINUTES_FOR_FIGURES) {
    notes.push(
      `a ${settings.minutes}-minute run is a smoke run: the growth and p99 figures need at least ` +
        `${MIN_MINUTES_FOR_FIGURES} minutes and are reported as n/a`,
    );
  }
  return notes;
}

/** The admin API sets each merchant's webhook to its path on the local receiver. */
async function registerWebhooks(
  api: RunningService,
  adminToken: string,
  merchants: readonly SoakMerchant[],
  sink: WebhookSink,
): Promise<void> {
  for (const merchant of merchants) {
    const response = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchant.id}/webhook`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ url: sink.urlFor(merchant.id) }),
    });
    const text = await response.text();
    if (response.status !== 200)
      throw new Error(`setting ${merchant.id}'s webhook answered ${response.status}: ${text.slice(0, 300)}`);
  }
}

async function waitForDrain(
  queue: QueueKeys,
  timeoutMs: number,
): Promise<{ ok: boolean; seconds: number; left: Record<string, number> }> {
  const began = performance.now();
  let left: Record<string, number> = {};
  const seconds = () => round((performance.now() - began) / 1000, 1);
  try {
    await pollUntil(
      async () => {
        left = {};
        for (const name of CANCEL_QUEUES) {
          const counts = await queue.jobCounts(name);
          for (const state of ['waiting', 'active', 'delayed', 'prioritized', 'paused', 'waiting-children']) {
            const count = counts[state] ?? 0;
            if (count > 0) left[`${name}.${state}`] = count;
          }
        }
        return Object.keys(left).length === 0 ? true : undefined;
      },
      { intervalMs: 500, timeoutMs, what: 'the cancel queues to drain' },
    );
    return { ok: true, seconds: seconds(), left };
  } catch {
    return { ok: false, seconds: seconds(), left };
  }
}

/** Rewards a 200 promised to cancel that are not CANCELLED: by id, then by (merchant, player). */
async function countNotCancelled(pool: pg.Pool, traffic: TrafficMix): Promise<number> {
  let missing = 0;
  const chunk = 10_000;
  for (let start = 0; start < traffic.acceptedRewardIds.length; start += chunk) {
    const { rows } = await pool.query<{ count: string }>(
      "SELECT count(*) AS count FROM rewards WHERE id = ANY($1::uuid[]) AND status <> 'CANCELLED'",
      [traffic.acceptedRewardIds.slice(start, start + chunk)],
    );
    missing += Number(rows[0]?.count ?? 0);
  }
  for (let start = 0; start < traffic.acceptedPlayers.length; start += chunk) {
    const players = traffic.acceptedPlayers.slice(start, start + chunk);
    const { rows } = await pool.query<{ count: string }>(
      `SELECT count(*) AS count FROM rewards r
       JOIN unnest($1::uuid[], $2::text[]) AS p(merchant_id, player_id)
         ON r.merchant_id = p.merchant_id AND r.player_id = p.player_id
       WHERE r.status <> 'CANCELLED'`,
      [players.map((p) => p.merchantId), players.map((p) => p.playerId)],
    );
    missing += Number(rows[0]?.count ?? 0);
  }
  return missing;
}

function minuteLine(minute: number, traffic: TrafficMix, sampler: SoakSampler): string {
  const from = (minute - 1) * 60;
  const cancels = latencyFigures(latenciesBetween(traffic.records.singleCancel, from, minute * 60));
  const reads = latencyFigures(latenciesBetween(traffic.records.readAll, from, minute * 60));
  const fiveXx = REQUEST_KINDS.reduce((sum, kind) => sum + kindFigures(traffic.records[kind]).fiveXx, 0);
  const sample = sampler.samples.at(-1);
  return (
    `minute ${minute}: cancel p50/p99 ${cancels.p50Ms}/${cancels.p99Ms} ms (${cancels.count}), readAll ` +
    `${reads.p50Ms}/${reads.p99Ms} ms, 5xx so far ${fiveXx}; own tables ${sample?.ownTablesMiB ?? '?'} MiB, ` +
    `Redis ${sample?.redisUsedMiB ?? '?'} MiB (${sample?.redisKeys ?? '?'} keys), RSS api ${sample?.apiRssMiB ?? '?'} / ` +
    `worker ${sample?.workerRssMiB ?? '?'} MiB, dead merchant pending ${sample?.deadPendingDeliveries ?? '?'}`
  );
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
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
