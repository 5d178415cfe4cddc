import { seedMerchants } from '../lib/seed.js';
import type { BenchContext, BenchData } from './context.js';

/**
 * Builds the template database: migrated by the real migrate command, filled by the real seed
 * command, then vacuumed, analysed and checkpointed. Every later run starts from a copy of it.
 */
export async function prepareData(context: BenchContext): Promise<BenchData> {
  const { settings, progress, services, databases } = context;
  const env = { databaseUrl: databases.seedUrl, redisUrl: settings.redisUrl };

  progress.step(`creating template database ${databases.seedName} and migrating it`);
  await databases.createSeedDatabase();
  await services.run('dist/shared/db/migrate.cli.js', [], 'migrate', {
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
  });

  const { bulk, reads, memorySmall, singles } = settings;
  progress.step(
    `seeding ${(bulk.players * bulk.rewardsPerPlayer).toLocaleString('en')} rewards ` +
      `(${bulk.players} players × ${bulk.rewardsPerPlayer}), ${reads.configurations} configurations × ` +
      `${reads.gamesPerConfiguration} games, sessions of ${reads.betSlipItems} items`,
  );
  const [main] = await seedMerchants(
    services,
    env,
    {
      merchants: 1,
      configurations: reads.configurations,
      gamesPerConfiguration: reads.gamesPerConfiguration,
      players: bulk.players,
      rewardsPerPlayer: bulk.rewardsPerPlayer,
      sessions: 5,
      betSlipItems: reads.betSlipItems,
    },
    'seed-main',
  );

  progress.step(
    `seeding ${(memorySmall.players * memorySmall.rewardsPerPlayer).toLocaleString('en')} rewards for the memory ` +
      `comparison and 2 × ${(2 * singles.requests).toLocaleString('en')} for single cancels`,
  );
  const small = { configurations: 1, gamesPerConfiguration: 1, sessions: 0, betSlipItems: 0 };
  const [memory] = await seedMerchants(
    services,
    env,
    { ...small, merchants: 1, players: memorySmall.players, rewardsPerPlayer: memorySmall.rewardsPerPlayer },
    'seed-memory',
  );
  const [singlesMerchant, singlesBaseline] = await seedMerchants(
    services,
    env,
    {
      ...small,
      merchants: 2,
      // Twice the requests: one set for the end-to-end run, one for the workers-alone (drain) run.
      players: Math.ceil((2 * singles.requests) / singles.rewardsPerPlayer),
      rewardsPerPlayer: singles.rewardsPerPlayer,
    },
    'seed-singles',
  );

  progress.step('vacuuming, analysing and checkpointing the template');
  await databases.settleSeedDatabase();
  if (!main || !memory || !singlesMerchant || !singlesBaseline)
    throw new Error('the seed made fewer merchants than asked');
  return { main, memory, singles: singlesMerchant, singlesBaseline };
}
