/**
 * What job event streams cost the API (GET /api/v1/integration/jobs/events), measured on the built
 * services (`npm run build` first; not part of `npm run bench` nor CI):
 *
 *   npx tsx bench/job-events-streams.ts [--players 10000] [--rewards-per-player 100] [--streams 200]
 *
 * Seeds one merchant with players × rewards (1,000,000 by default) through the real seed command, starts
 * the built API (its Postgres connections through a relay that counts its statements, so they are told
 * apart from the worker's) and queues one bulkCancelByQuery of every player while no worker runs. Then:
 * 1. the API's RSS and statements with no stream (the baseline, 15 s);
 * 2. the same with `--streams` streams open on that queued job (15 s): what a stream costs at rest;
 * 3. a worker is started and runs the job to its end while every stream follows it: the API's peak RSS,
 *    its statements, the progress events each stream got and the final event each ended with.
 * Prints one JSON report.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { installCleanup } from './lib/cleanup.js';
import { BenchDatabases } from './lib/database.js';
import { readRssMiB } from './lib/memory-sampler.js';
import { MerchantClient, signedBody } from './lib/merchant-client.js';
import { PgStatementCounter } from './lib/pg-statement-counter.js';
import { ServiceGroup } from './lib/processes.js';
import { QueueKeys } from './lib/queue-keys.js';
import { seedMerchants } from './lib/seed.js';

const { values } = parseArgs({
  options: {
    players: { type: 'string', default: '10000' },
    'rewards-per-player': { type: 'string', default: '100' },
    streams: { type: 'string', default: '200' },
    'rest-seconds': { type: 'string', default: '15' },
  },
});
const players = Number(values.players);
const rewardsPerPlayer = Number(values['rewards-per-player']);
const streamCount = Number(values.streams);
const restMs = Number(values['rest-seconds']) * 1000;

const root = process.cwd();
const logDir = join(root, 'bench/results/job-events-logs');
const databaseServer = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const runId = process.pid;
const log = (message: string) => process.stderr.write(`[job-events ${new Date().toISOString()}] ${message}\n`);

interface StreamTally {
  progress: number;
  final: { event: string; data: Record<string, unknown> } | null;
  firstAt: number | null;
  endedAt: number | null;
  error: string | null;
}

/** Opens one stream and tallies its events until it ends. */
function follow(url: string, tally: StreamTally, signal: AbortSignal): Promise<void> {
  return (async () => {
    try {
      const response = await fetch(url, { signal });
      if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let blank = buffer.indexOf('\n\n'); blank >= 0; blank = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, blank);
          buffer = buffer.slice(blank + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!event || !data) continue;
          tally.firstAt ??= Date.now();
          if (event === 'progress') tally.progress += 1;
          else tally.final = { event, data: JSON.parse(data) as Record<string, unknown> };
        }
      }
      tally.endedAt = Date.now();
    } catch (error) {
      if (!signal.aborted) tally.error = (error as Error).message;
    }
  })();
}

/** RSS and statements over a window, sampled every 250 ms. */
async function observe(pid: number, counter: PgStatementCounter, until: () => boolean, maxMs: number) {
  const rss: number[] = [];
  const statementsBefore = counter.statements;
  const started = Date.now();
  while (!until() && Date.now() - started < maxMs) {
    const sample = await readRssMiB(pid);
    if (sample !== null) rss.push(sample);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const seconds = (Date.now() - started) / 1000;
  const sorted = [...rss].sort((a, b) => a - b);
  return {
    seconds: Math.round(seconds * 10) / 10,
    rssMedianMiB: Math.round((sorted[Math.floor(sorted.length / 2)] ?? 0) * 10) / 10,
    rssPeakMiB: Math.round((sorted.at(-1) ?? 0) * 10) / 10,
    apiStatements: counter.statements - statementsBefore,
    apiStatementsPerSecond: Math.round(((counter.statements - statementsBefore) / seconds) * 100) / 100,
  };
}

async function main(): Promise<void> {
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  const services = new ServiceGroup(root, logDir);
  const databases = new BenchDatabases(databaseServer, runId);
  const queue = new QueueKeys(redisUrl, `{bench-events-${runId}}`);
  const server = new URL(databaseServer);
  const counter = new PgStatementCounter({ host: server.hostname, port: Number(server.port || 5432) });
  const streamsAbort = new AbortController();
  const cleanup = installCleanup(
    async () => {
      streamsAbort.abort();
      await services.stopAll().catch(() => {});
      await counter.close().catch(() => {});
      await databases.dropAll().catch(() => {});
      await queue.deleteAll().catch(() => {});
      queue.close();
      await databases.close().catch(() => {});
    },
    () => services.killAllNow(),
    log,
  );
  try {
    await queue.connect();
    log(
      `seeding ${(players * rewardsPerPlayer).toLocaleString('en')} rewards (${players} players × ${rewardsPerPlayer})`,
    );
    const seedStarted = Date.now();
    await databases.createSeedDatabase();
    await services.run('dist/tools/migrate.cli.js', [], 'migrate', {
      DATABASE_URL: databases.seedUrl,
      REDIS_URL: redisUrl,
    });
    const [merchant] = await seedMerchants(
      services,
      { databaseUrl: databases.seedUrl, redisUrl },
      {
        merchants: 1,
        configurations: 1,
        gamesPerConfiguration: 1,
        players,
        rewardsPerPlayer,
        sessions: 0,
        betSlipItems: 0,
      },
      'seed',
    );
    if (!merchant) throw new Error('no merchant seeded');
    await databases.settleSeedDatabase();
    await databases.cloneFreshLive();
    const seedSeconds = Math.round((Date.now() - seedStarted) / 1000);
    log(`seeded in ${seedSeconds} s`);

    const relayPort = await counter.listen();
    const relayUrl = new URL(databases.liveUrl);
    relayUrl.hostname = '127.0.0.1';
    relayUrl.port = String(relayPort);
    const environment = {
      databaseUrl: databases.liveUrl,
      redisUrl,
      queuePrefix: queue.prefix,
      extra: {
        JOB_EVENTS_MAX_STREAMS_PER_MERCHANT: String(streamCount + 10),
        JOB_EVENTS_MAX_STREAMS: String(streamCount + 10),
        LOG_LEVEL: 'warn',
      },
    };
    const api = await services.start('api', 'api', environment, { DATABASE_URL: relayUrl.toString() });
    const client = new MerchantClient(api.baseUrl, { id: merchant.id, secretKey: merchant.secretKey });
    // The seed's players: `player-000001` onwards (src/tools/seed/volume-seed.ts).
    const width = Math.max(6, String(players).length);
    const playerIds = Array.from({ length: players }, (_, index) => `player-${String(index + 1).padStart(width, '0')}`);
    if (merchant.playerIds.first !== playerIds[0] || merchant.playerIds.last !== playerIds.at(-1)) {
      throw new Error(
        `seeded players ${merchant.playerIds.first}…${merchant.playerIds.last}, expected ${playerIds[0]}…`,
      );
    }
    const jobId = await client.enqueue('/api/v1/integration/rewards/bulkCancelByQuery', { playerIds });
    log(`job ${jobId} queued (no worker yet)`);

    log(`baseline: no stream, ${restMs / 1000} s`);
    const baseline = await observe(api.pid, counter, () => false, restMs);

    const tallies: StreamTally[] = Array.from({ length: streamCount }, () => ({
      progress: 0,
      final: null,
      firstAt: null,
      endedAt: null,
      error: null,
    }));
    const openStarted = Date.now();
    const following = tallies.map((tally) => {
      const query = new URLSearchParams(
        Object.entries(signedBody({ id: merchant.id, secretKey: merchant.secretKey }, { jobId })).map(
          ([key, value]): [string, string] => [key, String(value)],
        ),
      );
      return follow(`${api.baseUrl}/api/v1/integration/jobs/events?${query}`, tally, streamsAbort.signal);
    });
    while (tallies.some((tally) => tally.firstAt === null && tally.error === null)) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const refused = tallies.filter((tally) => tally.error !== null);
    log(`${streamCount - refused.length} streams open in ${Date.now() - openStarted} ms (${refused.length} refused)`);

    log(`at rest: ${streamCount} streams on the queued job, ${restMs / 1000} s`);
    const atRest = await observe(api.pid, counter, () => false, restMs);

    log('starting the worker: the job runs while the streams follow it');
    const runStarted = Date.now();
    await services.start('worker', 'worker', environment);
    const running = await observe(
      api.pid,
      counter,
      () => tallies.every((tally) => tally.final !== null || tally.error !== null),
      30 * 60_000,
    );
    await Promise.all(following);
    const status = await client.jobStatus(jobId);
    const finals = tallies.map((tally) => tally.final?.event ?? tally.error ?? 'none');
    const progressCounts = tallies.map((tally) => tally.progress).sort((a, b) => a - b);
    const report = {
      rewards: players * rewardsPerPlayer,
      players,
      streams: streamCount,
      seedSeconds,
      jobId,
      baseline,
      atRest,
      running: { ...running, jobSeconds: Math.round((Date.now() - runStarted) / 1000) },
      rssGrowthAtRestMiB: Math.round((atRest.rssMedianMiB - baseline.rssMedianMiB) * 10) / 10,
      rssGrowthPeakMiB: Math.round((Math.max(atRest.rssPeakMiB, running.rssPeakMiB) - baseline.rssMedianMiB) * 10) / 10,
      apiStatementsPerStreamPerSecondAtRest:
        Math.round(((atRest.apiStatementsPerSecond - baseline.apiStatementsPerSecond) / streamCount) * 10_000) / 10_000,
      finalEvents: Object.fromEntries(
        [...new Set(finals)].map((name) => [name, finals.filter((f) => f === name).length]),
      ),
      progressEventsPerStream: {
        min: progressCounts[0],
        median: progressCounts[Math.floor(progressCounts.length / 2)],
        max: progressCounts.at(-1),
      },
      finalStatusOfOneStream: tallies[0]?.final?.data ?? null,
      jobStatusAfter: status,
      streamsEndedAfterFinal: tallies.filter((tally) => tally.endedAt !== null).length,
      // Every statement the API sent through the relay in the whole run (its readiness checks, the merchant's
      // lookup): shows the relay counted the API's statements at all.
      apiStatementsWholeRun: counter.statements,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    // A check of its own: the claim this script exists for.
    if (report.finalEvents.completed !== streamCount) process.exitCode = 1;
  } finally {
    await cleanup.run();
  }
}

await main();
