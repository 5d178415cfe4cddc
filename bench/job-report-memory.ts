/**
 * The report of a 1,000,000-reward job in constant API memory: seeds a merchant with 10,000 players of
 * 100 rewards each (set-based SQL), cancels them all with one bulkCancelByQuery on the built API and a
 * worker, then downloads `jobs/report` three ways (plain at full speed, gzip, and a slow reader) while
 * sampling the API process's RSS (/proc/<pid>/status VmRSS). Checks that every download's lines add up
 * to the job's counts and that its checksum holds, and prints the RSS before and the peak during each.
 *
 * Not part of CI: `npm run build && npx tsx bench/job-report-memory.ts` (DATABASE_URL, REDIS_URL as for
 * `npm run bench`). Results go to bench/results/job-report-memory.json.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { installCleanup } from './lib/cleanup.js';
import { BenchDatabases } from './lib/database.js';
import { RssSampler, readRssMiB } from './lib/memory-sampler.js';
import { MerchantClient } from './lib/merchant-client.js';
import { ServiceGroup } from './lib/processes.js';
import { Progress, pollUntil, sleep } from './lib/progress.js';
import { QueueKeys } from './lib/queue-keys.js';
import { downloadReport, type ReadReport } from './lib/report-download.js';
import { seedMerchants } from './lib/seed.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const LOG_DIR = join(root, 'bench/results/logs/job-report-memory');
const RESULTS_PATH = join(root, 'bench/results/job-report-memory.json');
const PLAYERS = 10_000;
const REWARDS_PER_PLAYER = 100;
const REWARDS = PLAYERS * REWARDS_PER_PLAYER;
/** The slow reader takes this many bytes a second: a client on a slow link, far below what the API sends. */
const SLOW_READER_BYTES_PER_SECOND = 4 * 1024 * 1024;

interface Download extends ReadReport {
  variant: string;
  seconds: number;
  rssBeforeMiB: number | null;
  rssPeakMiB: number | null;
  rssGrowthMiB: number | null;
  /** V8's heap spaces (MiB reserved) before and after, from the API's /metrics: where the growth is. */
  heapSpacesBeforeMiB: Record<string, number>;
  heapSpacesAfterMiB: Record<string, number>;
}

async function main(): Promise<number> {
  const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  const progress = new Progress();
  const runId = process.pid;
  rmSync(LOG_DIR, { recursive: true, force: true });
  mkdirSync(LOG_DIR, { recursive: true });
  const services = new ServiceGroup(root, LOG_DIR);
  const databases = new BenchDatabases(databaseUrl, runId);
  const queue = new QueueKeys(redisUrl, `{report-${runId}}`);
  const cleanup = installCleanup(
    async () => {
      await services.stopAll().catch(() => undefined);
      await databases.dropAll().catch(() => undefined);
      await queue.deleteAll().catch(() => undefined);
      queue.close();
      await databases.close();
    },
    () => services.killAllNow(),
    (message) => progress.step(message),
  );
  try {
    await queue.connect();
    progress.step(`creating ${databases.seedName}: migrate, one merchant, ${REWARDS.toLocaleString('en')} rewards`);
    await databases.createSeedDatabase();
    const seedEnv = { DATABASE_URL: databases.seedUrl, REDIS_URL: redisUrl };
    await services.run('dist/tools/migrate.cli.js', [], 'migrate', seedEnv);
    const [merchant] = await seedMerchants(
      services,
      { databaseUrl: databases.seedUrl, redisUrl },
      {
        merchants: 1,
        configurations: 1,
        gamesPerConfiguration: 1,
        players: 1,
        rewardsPerPlayer: 1,
        sessions: 1,
        betSlipItems: 1,
      },
      'seed',
    );
    if (!merchant?.configurationIds[0]) throw new Error('the seed made no configuration');
    const seedPool = new pg.Pool({ connectionString: databases.seedUrl, max: 1 });
    try {
      await seedPool.query(
        `INSERT INTO rewards (merchant_id, reward_configuration_id, player_id, external_id, status)
         SELECT $1::uuid, $2::uuid, 'rp-' || lpad(p::text, 5, '0'), 'rr-' || p || '-' || n, 'ACTIVE'
         FROM generate_series(0, $3::int - 1) AS p, generate_series(1, $4::int) AS n`,
        [merchant.id, merchant.configurationIds[0], PLAYERS, REWARDS_PER_PLAYER],
      );
    } finally {
      await seedPool.end();
    }
    await databases.settleSeedDatabase();
    await databases.cloneFreshLive();

    const environment = { databaseUrl: databases.liveUrl, redisUrl, queuePrefix: queue.prefix, extra: {} };
    progress.step('starting the built API and one worker');
    const api = await services.start('api', 'api', environment);
    await services.start('worker', 'worker', environment);
    const client = new MerchantClient(api.baseUrl, merchant);

    progress.step(`bulkCancelByQuery of ${PLAYERS.toLocaleString('en')} players`);
    const playerIds = Array.from({ length: PLAYERS }, (_, p) => `rp-${String(p).padStart(5, '0')}`);
    const cancelStarted = performance.now();
    const jobId = await client.enqueue('/api/v1/integration/rewards/bulkCancelByQuery', { playerIds });
    const status = await pollUntil(
      async () => {
        const current = await client.jobStatus(jobId);
        return ['completed', 'failed', 'cancelled'].includes(current.state) ? current : undefined;
      },
      { intervalMs: 500, timeoutMs: 20 * 60_000, what: `job ${jobId} to finish` },
    );
    const cancelSeconds = (performance.now() - cancelStarted) / 1_000;
    progress.step(`job ${status.state} in ${cancelSeconds.toFixed(1)} s: ${JSON.stringify(status.result)}`);
    if (status.result?.cancelled !== REWARDS)
      throw new Error(`expected ${REWARDS} cancelled, got ${status.result?.cancelled}`);

    // A large by-query job's rewards are listed moments after it completed: wait until the report answers.
    await pollUntil(
      async () => {
        const probe = await downloadReport(api.baseUrl, merchant, jobId, { gzip: false, probeOnly: true });
        return probe === 200 ? true : undefined;
      },
      { intervalMs: 1_000, timeoutMs: 5 * 60_000, what: 'the job report to answer 200' },
    );

    const downloads: Download[] = [];
    for (const variant of ['plain', 'gzip', 'slow reader'] as const) {
      // Let the API settle after the previous download, so each starts from its resting size.
      await sleep(3_000);
      const heapBefore = await heapSpacesMiB(api.adminUrl);
      const rssBefore = await readRssMiB(api.pid);
      const sampler = new RssSampler(api.pid, 50).start();
      const started = performance.now();
      const result = await downloadReport(api.baseUrl, merchant, jobId, {
        gzip: variant === 'gzip',
        bytesPerSecond: variant === 'slow reader' ? SLOW_READER_BYTES_PER_SECOND : undefined,
      });
      const seconds = (performance.now() - started) / 1_000;
      const rss = await sampler.stop();
      const heapAfter = await heapSpacesMiB(api.adminUrl);
      if (typeof result === 'number') throw new Error(`report answered ${result}`);
      const entry: Download = {
        variant,
        seconds: Math.round(seconds * 10) / 10,
        ...result,
        rssBeforeMiB: rssBefore === null ? null : Math.round(rssBefore * 10) / 10,
        rssPeakMiB: rss.peakMiB,
        rssGrowthMiB:
          rss.peakMiB === null || rssBefore === null ? null : Math.round((rss.peakMiB - rssBefore) * 10) / 10,
        heapSpacesBeforeMiB: heapBefore,
        heapSpacesAfterMiB: heapAfter,
      };
      downloads.push(entry);
      progress.step(
        `${variant}: ${entry.lines.toLocaleString('en')} lines, ${(entry.bytesOnWire / 1e6).toFixed(1)} MB on the wire ` +
          `in ${entry.seconds} s; checksum ${entry.checksumHolds ? 'holds' : 'FAILS'}; API RSS ${entry.rssBeforeMiB} → ` +
          `peak ${entry.rssPeakMiB} MiB (growth ${entry.rssGrowthMiB} MiB); V8 heap spaces ${JSON.stringify(heapBefore)} → ` +
          JSON.stringify(heapAfter),
      );
    }

    const failures = downloads.flatMap((entry) => {
      const problems: string[] = [];
      if (!entry.checksumHolds) problems.push(`${entry.variant}: checksum does not hold`);
      if (entry.lines !== REWARDS || entry.counts.cancelled !== status.result?.cancelled) {
        problems.push(`${entry.variant}: ${entry.lines} lines, ${entry.counts.cancelled} cancelled`);
      }
      if (entry.rssGrowthMiB === null || entry.rssGrowthMiB >= 50) {
        problems.push(`${entry.variant}: API RSS grew ${entry.rssGrowthMiB} MiB`);
      }
      return problems;
    });
    const results = { rewards: REWARDS, jobId, jobResult: status.result, cancelSeconds, downloads, failures };
    writeFileSync(RESULTS_PATH, `${JSON.stringify(results, null, 2)}\n`);
    progress.step(`results in ${RESULTS_PATH}`);
    for (const failure of failures) progress.step(`FAILED: ${failure}`);
    return failures.length === 0 ? 0 : 1;
  } finally {
    await cleanup.run();
  }
}

/** The API's V8 heap spaces as its /metrics reports them (MiB reserved per space); empty if it does not answer. */
async function heapSpacesMiB(adminUrl: string): Promise<Record<string, number>> {
  try {
    const text = await (await fetch(`${adminUrl}/metrics`)).text();
    const spaces: Record<string, number> = {};
    for (const match of text.matchAll(/^nodejs_heap_space_size_total_bytes\{[^}]*space="([a-z_]+)"[^}]*\} (\d+)/gm)) {
      spaces[match[1] as string] = Math.round(Number(match[2]) / 1024 / 102.4) / 10;
    }
    return spaces;
  } catch {
    return {};
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`job-report-memory: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  },
);
