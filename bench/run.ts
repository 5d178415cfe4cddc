import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchResults } from './figures/bench-results.js';
import { Checks } from './lib/checks.js';
import { installCleanup } from './lib/cleanup.js';
import { BenchDatabases } from './lib/database.js';
import { isRunning } from './lib/is-running.js';
import { describeMachine } from './lib/machine.js';
import { ServiceGroup } from './lib/processes.js';
import { Progress } from './lib/progress.js';
import { QueueKeys } from './lib/queue-keys.js';
import { parseBenchArgs, USAGE } from './lib/settings.js';
import type { BenchContext } from './phases/context.js';
import { prepareData } from './phases/prepare.phase.js';
import { runAllPhases } from './phases/table.js';
import { formatReport, writeResults } from './report/format.js';
import { httpRecord, writeHttpRecord } from './report/http-record.js';
import { evaluateTargets } from './report/targets.js';

/**
 * `npm run bench [-- --quick]`: measures the performance targets, each beside its baseline in the
 * same run, on a database and queue prefix of its own, with API and worker processes started from
 * the built code. Progress on stderr; the table on stdout; the figures in bench/results/latest.json
 * (and, when the HTTP phase ran, its CPU figures in bench/results/<UTC minute>-http.json).
 * Exits non-zero when a correctness check fails or a phase cannot finish (never for timing).
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const RESULTS_DIR = join(root, 'bench/results');
const RESULTS_PATH = join(RESULTS_DIR, 'latest.json');
const LOG_DIR = join(root, 'bench/results/logs');
const PROFILE_DIR = join(root, 'bench/results/profiles');

async function main(): Promise<number> {
  let settings: ReturnType<typeof parseBenchArgs>;
  try {
    settings = parseBenchArgs(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (settings === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const started = performance.now();
  const progress = new Progress();
  // The process id names the run's database and queue prefix: two runs never share them.
  const runId = process.pid;
  rmSync(LOG_DIR, { recursive: true, force: true });
  mkdirSync(LOG_DIR, { recursive: true });
  if (settings.profile) {
    rmSync(PROFILE_DIR, { recursive: true, force: true });
    mkdirSync(PROFILE_DIR, { recursive: true });
  }
  const services = new ServiceGroup(root, LOG_DIR, settings.profile ? PROFILE_DIR : null);
  const databases = new BenchDatabases(settings.databaseUrl, runId);
  const queue = new QueueKeys(settings.redisUrl, `{bench-${runId}}`);
  const checks = new Checks();
  let cleanupStarted = () => false;
  const context: BenchContext = {
    interrupted: () => cleanupStarted(),
    settings,
    progress,
    services,
    databases,
    queue,
    checks,
    environment: {
      databaseUrl: databases.liveUrl,
      redisUrl: settings.redisUrl,
      queuePrefix: queue.prefix,
      extra: settings.serviceEnv,
    },
  };

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
      await step('drop the benchmark databases', () => databases.dropAll());
      await step('delete the queue keys', () => queue.deleteAll());
      await step('close connections', async () => {
        queue.close();
        await databases.close();
      });
    },
    () => services.killAllNow(),
    (message) => progress.step(message),
  );
  cleanupStarted = () => cleanup.started;

  progress.step(
    `${settings.quick ? 'quick' : 'full'} run ${runId}: database ${databases.liveName}, queue prefix ${queue.prefix}, ` +
      `service logs in ${LOG_DIR}` +
      (Object.keys(settings.serviceEnv).length > 0 ? `; service env ${JSON.stringify(settings.serviceEnv)}` : ''),
  );
  let results: BenchResults;
  try {
    await queue.connect();
    const machine = describeMachine(await databases.serverVersion(), await queue.serverVersion());
    const leftovers = await databases.dropLeftovers(isRunning);
    if (leftovers.length > 0) progress.step(`dropped databases left by killed runs: ${leftovers.join(', ')}`);
    const data = await prepareData(context);
    const phases = await runAllPhases(context, data);
    const partial = {
      ...phases,
      machine,
      at: new Date().toISOString(),
      quick: settings.quick,
      serviceEnv: settings.serviceEnv,
      sizes: {
        bulkRewards: settings.bulk.players * settings.bulk.rewardsPerPlayer,
        smallRewards: settings.memorySmall.players * settings.memorySmall.rewardsPerPlayer,
        singleCancels: settings.singles.requests,
        httpSeconds: settings.http.durationSeconds,
        httpConnections: settings.http.connections,
        readAllStream: settings.readAllStream,
        redisMemory: settings.redisMemory,
        fairTurns: settings.fairTurns,
      },
      only: settings.only === null ? null : [...settings.only],
      durationSeconds: 0,
      checks: checks.all,
    };
    results = { ...partial, targets: evaluateTargets(partial) };
  } finally {
    progress.step('cleaning up: stopping the services, dropping the databases, deleting the queue keys');
    await cleanup.run();
  }

  results.durationSeconds = Math.round((performance.now() - started) / 1000);
  writeResults(RESULTS_PATH, results);
  process.stdout.write(`${formatReport(results)}\n`);
  progress.step(`results written to ${RESULTS_PATH}`);
  if (results.http) {
    const run = { ...results, connections: settings.http.connections };
    const failed = results.checks.filter((check) => !check.ok).map((check) => check.name);
    progress.step(`HTTP figures written to ${writeHttpRecord(RESULTS_DIR, httpRecord(results.http, run, failed))}`);
  }
  return checks.failed.length === 0 && results.errors.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
