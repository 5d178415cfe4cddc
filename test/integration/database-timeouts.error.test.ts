import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiConnections } from '../../src/api/api-deps.js';
import type { Config } from '../../src/shared/config/config.js';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { createWorkerConnections } from '../../src/worker/worker-deps.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createMerchant, createSession, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * Postgres timeouts per pool (docs/operations.md): what each process's connections carry, what a read
 * past the API's timeouts answers, and the per-merchant cap that keeps dry runs from filling the pool.
 */

const QUERY_PATH = '/api/v1/integration/rewards/bulkCancelByQuery';
const logger = createLogger({ level: 'silent', name: 'timeouts-test' });

const { env } = useTestContext();
let merchant: MerchantFixture;
let other: MerchantFixture;
const opened: Array<{ db: Db; close: () => void }> = [];

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  other = await createMerchant(env.db);
});
afterAll(async () => {
  for (const { db, close } of opened) {
    close();
    await db.destroy();
  }
});

/** An API process's own pool (the production wiring: createApiConnections), with these settings. */
function apiPool(settings: Partial<Config>): Db {
  const { db, redis, requestRedis } = createApiConnections({ ...env.config, ...settings }, logger);
  opened.push({
    db,
    close: () => {
      redis.disconnect();
      requestRedis.disconnect();
    },
  });
  return db;
}

async function show(db: Db, setting: string): Promise<string> {
  const result = await sql<Record<string, string>>`SHOW ${sql.raw(setting)}`.execute(db);
  return Object.values(result.rows[0] ?? {})[0] ?? '';
}

/** Holds `rewards` locked against every read until `release` is called. */
async function lockRewards(): Promise<{ release: () => Promise<void> }> {
  const holder = createDb({ connectionString: env.databaseUrl, poolSize: 1, applicationName: 'rewards-test-lock' });
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let taken: () => void = () => {};
  const lockTaken = new Promise<void>((resolve) => {
    taken = resolve;
  });
  const holding = holder.transaction().execute(async (trx) => {
    await sql`LOCK TABLE rewards IN ACCESS EXCLUSIVE MODE`.execute(trx);
    taken();
    await released;
  });
  await lockTaken;
  return {
    release: async () => {
      release();
      await holding;
      await holder.destroy();
    },
  };
}

const dryRun = (api: TestApi, who: MerchantFixture) =>
  api.post(QUERY_PATH, signedBody(who, { playerIds: ['p-1', 'p-2'], dryRun: true }));

describe('the timeouts each pool sets on its connections', () => {
  it('API: statement 5 s, lock 1 s; worker: statement 1 min, lock 5 s; both: idle in transaction 30 s', async () => {
    const api = apiPool({});
    expect(await show(api, 'statement_timeout')).toBe('5s');
    expect(await show(api, 'lock_timeout')).toBe('1s');
    expect(await show(api, 'idle_in_transaction_session_timeout')).toBe('30s');

    const { db: worker, redis } = createWorkerConnections(env.config, logger);
    opened.push({ db: worker, close: () => redis.disconnect() });
    expect(await show(worker, 'statement_timeout')).toBe('1min');
    expect(await show(worker, 'lock_timeout')).toBe('5s');
    expect(await show(worker, 'idle_in_transaction_session_timeout')).toBe('30s');
  });

  it('a pool built without timeouts (the migration command) keeps the server default: none', async () => {
    const migrate = createDb({ connectionString: env.databaseUrl, poolSize: 1, applicationName: 'rewards-migrate' });
    try {
      expect(await show(migrate, 'statement_timeout')).toBe('0');
      expect(await show(migrate, 'lock_timeout')).toBe('0');
    } finally {
      await migrate.destroy();
    }
  });

  it('the settings are read from the environment', async () => {
    const db = apiPool({ API_STATEMENT_TIMEOUT_MS: 1_234, API_LOCK_TIMEOUT_MS: 0 });
    expect(await show(db, 'statement_timeout')).toBe('1234ms');
    expect(await show(db, 'lock_timeout')).toBe('0');
  });
});

describe('a read past the API timeouts', () => {
  it('answers 503 errorCode 11 with Retry-After when the statement runs past API_STATEMENT_TIMEOUT_MS', async () => {
    const db = apiPool({ API_STATEMENT_TIMEOUT_MS: 300, API_LOCK_TIMEOUT_MS: 10_000 });
    const api = await startTestApi(env, { db });
    const lock = await lockRewards();
    try {
      const response = await dryRun(api, merchant);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('1');
      expect(await response.json()).toMatchObject({ errorCode: 11 });
    } finally {
      await lock.release();
      await api.close();
    }
    // The connection is free and works again.
    expect(await show(db, 'statement_timeout')).toBe('300ms');
  });

  it('answers 503 errorCode 11 with Retry-After when a lock is not granted within API_LOCK_TIMEOUT_MS', async () => {
    const db = apiPool({ API_STATEMENT_TIMEOUT_MS: 10_000, API_LOCK_TIMEOUT_MS: 200 });
    const api = await startTestApi(env, { db });
    const lock = await lockRewards();
    try {
      const response = await dryRun(api, merchant);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('1');
      expect(await response.json()).toMatchObject({ errorCode: 11 });
    } finally {
      await lock.release();
      await api.close();
    }
  });
});

describe('heavy reads per merchant', () => {
  it('ten dry runs at once: two run, the rest answer 429 at once, and /betSlip keeps answering 200', async () => {
    // A pool of four, and reads that last until released (the rewards table locked): two dry runs of the
    // merchant and one of another merchant hold three. Without the cap, the eleven would hold every
    // connection and /betSlip would wait for one until it answers 503.
    const db = apiPool({ DB_POOL_SIZE: 4, API_STATEMENT_TIMEOUT_MS: 30_000, API_LOCK_TIMEOUT_MS: 30_000 });
    const api = await startTestApi(env, { db });
    const session = await createSession(env.db, { merchantId: merchant.id, playerId: 'heavy-reads' });
    const lock = await lockRewards();
    try {
      const runs = Array.from({ length: 10 }, () => dryRun(api, merchant));
      const otherMerchant = dryRun(api, other);
      // The eight over the cap answer at once, while the two under it (and the other merchant's) wait.
      const settled = await Promise.all(
        runs.map((run) =>
          Promise.race([run, new Promise<'waiting'>((resolve) => setTimeout(resolve, 1_000, 'waiting'))]),
        ),
      );
      const refused = settled.filter((answer): answer is Response => answer !== 'waiting');
      expect(refused).toHaveLength(8);
      for (const response of refused) {
        expect(response.status).toBe(429);
        expect(response.headers.get('retry-after')).toBe('1');
        expect(await response.json()).toMatchObject({ errorCode: 7 });
      }
      for (let i = 0; i < 5; i++) {
        const betSlip = await api.post('/betSlip', signedBody(merchant, { authToken: session.token }));
        expect(betSlip.status).toBe(200);
      }
      await lock.release();
      const answered = await Promise.all([...runs, otherMerchant]);
      const statuses = answered.map((response) => response.status).sort();
      expect(statuses.filter((status) => status === 200)).toHaveLength(3);
      // Once they finished, the merchant may run dry runs again.
      expect((await dryRun(api, merchant)).status).toBe(200);
    } finally {
      await lock.release().catch(() => {});
      await api.close();
    }
  });
});
