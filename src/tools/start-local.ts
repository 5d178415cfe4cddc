import { type Config, ConfigError, loadConfig, localEnvironment } from '../shared/config/config.js';
import { createDb } from '../shared/db/client.js';
import { migrateToLatest } from '../shared/db/migrator.js';
import { keyRingFromConfig } from '../shared/secrets/key-ring.js';
import { DEVELOPMENT_ADMIN_TOKEN_FILE, developmentAdminToken } from './development-admin-token.js';
import { renderBanner } from './local-banner.js';
import { LocalProcess, waitUntilReady } from './local-process.js';
import { checkRedis, ensureDatabase, LocalServerError } from './local-servers.js';
import { seedDemo } from './seed/demo-seed.js';
import { seedRefusal } from './seed/seed-guard.js';

/**
 * `npm start`: the service on this machine in one command, against the Postgres and Redis on the
 * default local ports (or DATABASE_URL / REDIS_URL, from the environment or .env). It creates the
 * database when missing, migrates it, loads the demo data, then runs the API and a worker as child
 * processes until Ctrl-C, which stops both gracefully.
 */

/** How long the API and the worker may take to answer /readyz: a first start compiles the TypeScript (tsx). */
const READY_TIMEOUT_MS = 60_000;
/** A second Ctrl-C within this long of the first is the same key press, which npm forwards twice. */
const REPEATED_SIGNAL_MS = 1_000;

function fail(message: string): never {
  process.stderr.write(`npm start: ${message}\n`);
  process.exit(1);
}

const env = localEnvironment();
// With no operator configured, one named `admin` whose token is kept in .admin-token.dev (made once).
const adminTokenGenerated = !env.ADMIN_TOKEN && !env.ADMIN_TOKENS;
if (adminTokenGenerated) env.ADMIN_TOKEN = developmentAdminToken();

let config: Config;
try {
  config = loadConfig(env);
} catch (error) {
  fail(error instanceof ConfigError ? error.message : String(error));
}
// It loads the demo data as `npm run seed` does, so it is refused where the seed is.
const seedRefused = seedRefusal(config);
if (seedRefused !== null) fail(seedRefused);

try {
  const created = await ensureDatabase(config.DATABASE_URL);
  // A Redis Cluster is reached by the processes themselves; only a single local Redis is checked here.
  if (config.REDIS_URL && !config.REDIS_CLUSTER_NODES) await checkRedis(config.REDIS_URL);
  const db = createDb({
    connectionString: config.DATABASE_URL,
    poolSize: 2,
    applicationName: 'rewards-start',
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
  });
  try {
    const applied = await migrateToLatest(db, {
      rewardPartitions: config.REWARD_PARTITIONS,
      lockTimeoutMs: config.MIGRATION_LOCK_TIMEOUT_MS,
      lockRetries: config.MIGRATION_LOCK_RETRIES,
    });
    await seedDemo(db, keyRingFromConfig(config));
    const database = new URL(config.DATABASE_URL).pathname.slice(1);
    process.stdout.write(
      `database "${database}": ${created ? 'created, ' : ''}${applied.length} migration(s) applied, demo data loaded\n`,
    );
  } finally {
    await db.destroy();
  }
} catch (error) {
  if (error instanceof LocalServerError) fail(error.message);
  fail(`could not prepare the database: ${error instanceof Error ? error.message : String(error)}`);
}

const children = [new LocalProcess('api', env), new LocalProcess('worker', env)];
let stopping = false;
let firstSignalAt = 0;

async function stopAll(exitCode: number): Promise<never> {
  stopping = true;
  for (const child of children) child.signal('SIGTERM');
  const codes = await Promise.all(children.map((child) => child.exited));
  process.exit(codes.every((code) => code === 0) ? exitCode : exitCode || 1);
}

function onSignal(): void {
  // npm forwards the terminal's Ctrl-C as well, so one key press can arrive twice: only a second press
  // a moment later forces the children down.
  if (!stopping) {
    firstSignalAt = Date.now();
    process.stdout.write('\nstopping the API and the worker (Ctrl-C again to force)…\n');
    void stopAll(0);
  } else if (Date.now() - firstSignalAt > REPEATED_SIGNAL_MS) {
    for (const child of children) child.signal('SIGKILL');
  }
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
// If this process goes, its children (in their own process groups) must not stay behind.
process.on('exit', () => {
  for (const child of children) child.signal('SIGKILL');
});

for (const child of children) {
  void child.exited.then((code) => {
    if (stopping) return;
    process.stderr.write(`npm start: the ${child.name} stopped (exit code ${code}); stopping the other.\n`);
    void stopAll(1);
  });
}

// Listening on every address: the banner says localhost, the readiness probe goes to IPv4 loopback.
const wildcard = config.HOST === '0.0.0.0' || config.HOST === '::';
const shownHost = wildcard ? 'localhost' : config.HOST;
const probeHost = wildcard ? '127.0.0.1' : config.HOST;
const apiBaseUrl = `http://${shownHost}:${config.PORT}`;
const adminBaseUrl = `http://${shownHost}:${config.ADMIN_PORT}`;
const workerBaseUrl = `http://${shownHost}:${config.WORKER_PORT}`;
const [api, worker] = children as [LocalProcess, LocalProcess];
try {
  await Promise.all([
    waitUntilReady(api, `http://${probeHost}:${config.PORT}/readyz`, READY_TIMEOUT_MS),
    waitUntilReady(worker, `http://${probeHost}:${config.WORKER_PORT}/readyz`, READY_TIMEOUT_MS),
  ]);
} catch (error) {
  // A child that exited has already started the stop (and the exit); say why only once.
  if (stopping) await new Promise(() => undefined);
  process.stderr.write(`npm start: ${error instanceof Error ? error.message : String(error)}\n`);
  await stopAll(1);
}
if (!stopping) {
  process.stdout.write(
    renderBanner({
      apiBaseUrl,
      adminBaseUrl,
      workerBaseUrl,
      adminToken: config.ADMIN_TOKEN ?? '',
      adminTokenFile: adminTokenGenerated ? DEVELOPMENT_ADMIN_TOKEN_FILE : undefined,
      signatureWindowMs: config.SIGNATURE_WINDOW_MS,
      now: Date.now(),
    }),
  );
}
