import pg from 'pg';
import type { BenchDatabases } from '../lib/database.js';
import type { ServiceGroup } from '../lib/processes.js';
import { type SeededMerchant, seedMerchants } from '../lib/seed.js';
import type { OutageSettings } from './outage-settings.js';

/** The outage run's rewards: the query's players and theirs, and the rewards of the single cancels. */
export interface OutageData {
  merchant: SeededMerchant;
  /** A pool on the live database, directly (not through the proxy the services use). */
  db: pg.Pool;
  /** The bulkCancelByQuery's players, and how many ACTIVE rewards they hold. */
  queried: string[];
  queriedRewards: number;
  /** One reward per single cancel, of players after the query's. */
  singleRewards: string[];
}

/** Migrates and seeds the seed database, copies it to the live one and picks the rewards each part cancels. */
export async function seedOutageData(
  services: ServiceGroup,
  databases: BenchDatabases,
  redisUrl: string,
  settings: OutageSettings,
): Promise<OutageData> {
  await databases.createSeedDatabase();
  await services.run('dist/tools/migrate.cli.js', [], 'migrate', {
    DATABASE_URL: databases.seedUrl,
    REDIS_URL: redisUrl,
  });
  // The query's players, plus enough players after them to give the single cancels rewards of their own.
  const singlePlayers = Math.ceil(settings.singleCancels / settings.rewardsPerPlayer);
  const [merchant] = await seedMerchants(
    services,
    { databaseUrl: databases.seedUrl, redisUrl },
    {
      merchants: 1,
      configurations: 1,
      gamesPerConfiguration: 1,
      players: settings.players + singlePlayers,
      rewardsPerPlayer: settings.rewardsPerPlayer,
      sessions: 1,
      betSlipItems: 1,
    },
    'seed',
  );
  if (!merchant) throw new Error('the seed made no merchant');
  await databases.settleSeedDatabase();
  await databases.cloneFreshLive();
  const db = new pg.Pool({ connectionString: databases.liveUrl, max: 2 });
  db.on('error', () => {});

  const players = (
    await db.query<{ player_id: string }>(
      'SELECT DISTINCT player_id FROM rewards WHERE merchant_id = $1 ORDER BY player_id',
      [merchant.id],
    )
  ).rows.map((row) => row.player_id);
  const queried = players.slice(0, settings.players);
  const singleRewards = (
    await db.query<{ id: string }>(
      'SELECT id::text FROM rewards WHERE merchant_id = $1 AND player_id = ANY($2) AND status = $3 ORDER BY id LIMIT $4',
      [merchant.id, players.slice(settings.players), 'ACTIVE', settings.singleCancels],
    )
  ).rows.map((row) => row.id);
  const queriedRewards = await countStillActive(db, merchant.id, queried);
  return { merchant, db, queried, queriedRewards, singleRewards };
}

/** The queried players' rewards still ACTIVE. */
export async function countStillActive(db: pg.Pool, merchantId: string, players: readonly string[]): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    "SELECT count(*) AS n FROM rewards WHERE merchant_id = $1 AND player_id = ANY($2) AND status = 'ACTIVE'",
    [merchantId, players],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Accepted single cancels whose reward is not CANCELLED by the job that accepted it. */
export async function countNotApplied(
  db: pg.Pool,
  accepted: ReadonlyArray<{ rewardId: string; jobId: string | null }>,
): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM unnest($1::uuid[], $2::uuid[]) AS p(reward_id, job_id)
     LEFT JOIN rewards r ON r.id = p.reward_id
     WHERE r.status IS DISTINCT FROM 'CANCELLED' OR r.cancellation_job_id IS DISTINCT FROM p.job_id`,
    [accepted.map((s) => s.rewardId), accepted.map((s) => s.jobId)],
  );
  return Number(rows[0]?.n ?? 0);
}
