import { pino } from 'pino';
import { loadConfigOrExit, localEnvironment } from '../../shared/config/config.js';
import { createDb } from '../../shared/db/client.js';
import { keyRingFromConfig } from '../../shared/secrets/key-ring.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { seedDemo } from './demo-seed.js';
import { seedRefusal } from './seed-guard.js';
import { parseSeedArgs, SEED_USAGE } from './seed-options.js';
import { toPrintedReport } from './seed-report.js';
import { seedVolume } from './volume-seed.js';

// stdout carries exactly one JSON document (so it can be piped to jq); everything else goes to stderr.
const command = parseSeedArgs(process.argv.slice(2));
if (command.kind === 'help') {
  process.stdout.write(SEED_USAGE);
  process.exit(0);
}
if (command.kind === 'invalid') {
  process.stderr.write(`seed: ${command.message}\nRun 'npm run seed -- --help' for the flags.\n`);
  process.exit(2);
}

// A development tool, like `npm start`: with nothing set it seeds the database `npm start` uses.
const config = loadConfigOrExit(localEnvironment());
const refusal = seedRefusal(config);
if (refusal !== null) {
  process.stderr.write(`${refusal}\n`);
  process.exit(2);
}
const logger = createLogger({ level: config.LOG_LEVEL, name: 'seed' }, pino.destination(2));
const secrets = keyRingFromConfig(config);
const db = createDb({
  connectionString: config.DATABASE_URL,
  poolSize: 2,
  applicationName: 'rewards-seed',
  connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
});

try {
  logger.info(
    command.kind === 'volume' ? { volume: command.options } : { reset: command.reset },
    `seeding ${command.kind} data`,
  );
  const report =
    command.kind === 'demo'
      ? await seedDemo(db, secrets, { reset: command.reset })
      : await seedVolume(db, secrets, command.options, { logger });
  logger.info({ totals: report.totals, ms: report.ms }, 'seed complete');
  process.stdout.write(`${JSON.stringify(toPrintedReport(report), null, 2)}\n`);
} catch (error) {
  logger.error({ err: error }, 'seed failed');
  process.exitCode = 1;
} finally {
  await db.destroy();
}
