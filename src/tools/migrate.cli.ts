import { loadConfigOrExit } from '../shared/config/config.js';
import { createDb } from '../shared/db/client.js';
import { migrateToLatest, rewardPartitionCount } from '../shared/db/migrator.js';
import { createLogger } from '../shared/telemetry/logger.js';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'migrate' });
const db = createDb({
  connectionString: config.DATABASE_URL,
  poolSize: 2,
  applicationName: 'rewards-migrate',
  connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
});

try {
  const applied = await migrateToLatest(db, {
    rewardPartitions: config.REWARD_PARTITIONS,
    lockTimeoutMs: config.MIGRATION_LOCK_TIMEOUT_MS,
    lockRetries: config.MIGRATION_LOCK_RETRIES,
    onEvent: (event) =>
      event.kind === 'applied'
        ? logger.info(event, 'migration applied')
        : logger.warn(event, 'migration lock not granted in time; rolled back, retrying'),
  });
  logger.info({ applied }, applied.length ? 'migrations applied' : 'database already up to date');
  const partitions = await rewardPartitionCount(db);
  if (partitions !== config.REWARD_PARTITIONS) {
    // The count is fixed by the first migration; a later REWARD_PARTITIONS changes nothing.
    logger.warn(
      { partitions, REWARD_PARTITIONS: config.REWARD_PARTITIONS },
      'rewards keeps the partitions it was created with; REWARD_PARTITIONS applies to a new database only',
    );
  }
} catch (error) {
  logger.error({ err: error }, 'migration failed');
  process.exitCode = 1;
} finally {
  await db.destroy();
}
