import { loadConfigOrExit } from '../shared/config/config.js';
import { createDb } from '../shared/db/client.js';
import { keyRingFromConfig } from '../shared/secrets/key-ring.js';
import { resealSecrets } from './reseal-secrets.js';

/**
 * `npm run secrets:reseal` (built: `node dist/tools/reseal-secrets.cli.js`): seals every
 * stored secret again under the first key of SECRETS_KEYS, bound to its merchant and column, printing progress per batch. Run it with
 * the same ring as the services, after a new key has been put first (docs/operations.md).
 */
const config = loadConfigOrExit();
const ring = keyRingFromConfig(config);
const db = createDb({
  connectionString: config.DATABASE_URL,
  poolSize: 1,
  applicationName: 'rewards-reseal',
  connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
});

try {
  process.stdout.write(`resealing every stored secret under key "${ring.currentKid}", bound to merchant and column\n`);
  const report = await resealSecrets(db, ring, {
    onProgress: ({ table, scanned, changed }) =>
      process.stdout.write(`${table}: ${scanned} rows read, ${changed} rewritten\n`),
  });
  process.stdout.write(
    `done. merchants: ${report.merchants.resealed} secrets resealed, ${report.merchants.plainSealed} plain ones sealed, ` +
      `${report.merchants.previousCleared} expired previous secrets cleared; webhooks: ${report.webhooks.resealed} ` +
      `resealed, ${report.webhooks.plainSealed} plain ones sealed\n`,
  );
} catch (error) {
  process.stderr.write(`secrets:reseal failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
