import pg from 'pg';
import type { MerchantCredentials } from '../lib/merchant-client.js';
import type { ServiceGroup } from '../lib/processes.js';
import { seedMerchants } from '../lib/seed.js';
import { type SoakSettings, seedSizes } from './soak-settings.js';

/** One merchant of the soak and the rewards it may still cancel, taken from the front as the run goes. */
export interface SoakMerchant extends MerchantCredentials {
  /** Reward ids for single cancels and bulkCancel. */
  idPool: string[];
  /** Players whose every reward a bulkCancelByQuery cancels. */
  playerPool: string[];
  /** True for the merchant whose webhook receiver answers 500 throughout. */
  deadReceiver: boolean;
}

/**
 * Seeds the merchants with the real seed command (into `databaseUrl`, the template the live database is
 * cloned from) and reads back their reward ids: the seed's report names players, not rewards. Each
 * merchant's first players go to the query cancels, the rest's rewards to the id-based cancels, so
 * that no reward is targeted twice.
 */
export async function seedSoakMerchants(
  services: ServiceGroup,
  env: { databaseUrl: string; redisUrl: string },
  settings: SoakSettings,
): Promise<SoakMerchant[]> {
  const { idPlayers, queryPlayers } = seedSizes(settings);
  const seeded = await seedMerchants(
    services,
    env,
    {
      merchants: settings.merchants,
      configurations: 20,
      gamesPerConfiguration: 3,
      players: idPlayers + queryPlayers,
      rewardsPerPlayer: settings.rewardsPerPlayer,
      sessions: 5,
      betSlipItems: 5,
    },
    'seed-soak',
  );
  const client = new pg.Client({ connectionString: env.databaseUrl, application_name: 'rewards-soak' });
  await client.connect();
  try {
    const merchants: SoakMerchant[] = [];
    for (const [index, merchant] of seeded.entries()) {
      const { rows } = await client.query<{ id: string; player_id: string }>(
        "SELECT id, player_id FROM rewards WHERE merchant_id = $1 AND status = 'ACTIVE' ORDER BY player_id, id",
        [merchant.id],
      );
      const players = [...new Set(rows.map((row) => row.player_id))];
      const queryPool = new Set(players.slice(0, queryPlayers));
      merchants.push({
        id: merchant.id,
        secretKey: merchant.secretKey,
        idPool: shuffle(rows.filter((row) => !queryPool.has(row.player_id)).map((row) => row.id)),
        playerPool: [...queryPool],
        deadReceiver: index === settings.deadReceiverMerchant,
      });
    }
    return merchants;
  } finally {
    await client.end();
  }
}

/** Fisher–Yates: cancels spread over the table as a merchant's would, not in id order. */
function shuffle<T>(items: T[]): T[] {
  for (let index = items.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1));
    [items[index], items[other]] = [items[other] as T, items[index] as T];
  }
  return items;
}
