import { loadConfigOrExit } from '../config.js';
import { createLogger } from '../logger.js';
import { createDb } from './client.js';
import { migrateToLatest } from './migrator.js';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'migrate' });
const db = createDb({ connectionString: config.DATABASE_URL, poolSize: 2, applicationName: 'rewards-migrate' });

try {
  const applied = await migrateToLatest(db);
  logger.info({ applied }, applied.length ? 'migrations applied' : 'database already up to date');
} catch (error) {
  logger.error({ err: error }, 'migration failed');
  process.exitCode = 1;
} finally {
  await db.destroy();
}
