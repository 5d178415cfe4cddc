import { seedMerchants } from '../lib/seed.js';
import type { PhaseGroup } from '../lib/settings.js';
import type { BenchContext, BenchData } from './context.js';

/**
 * Builds the template database: migrated by the real migrate command, filled by the real seed
 * command, then vacuumed, analysed and checkpointed. Every later run starts from a copy of it. Only
 * the data of the selected phase groups is seeded (all of them without `--only`).
 */
export async function prepareData(context: BenchContext): Promise<BenchData> {
  const { settings, progress, services, databases } = context;
  const env = { databaseUrl: databases.seedUrl, redisUrl: settings.redisUrl };
  const selected = (group: PhaseGroup) => settings.only === null || settings.only.has(group);
  const data: BenchData = {
    main: null,
    memory: null,
    singles: null,
    singlesBaseline: null,
    redisMemory: null,
    tenantA: null,
    tenantB: null,
  };

  progress.step(`creating template database ${databases.seedName} and migrating it`);
  await databases.createSeedDatabase();
  await services.run('dist/tools/migrate.cli.js', [], 'migrate', {
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
  });

  const { bulk, reads, memorySmall, singles } = settings;
  if (selected('http') || selected('tracing') || selected('bulk')) {
    progress.step(
      `seeding ${(bulk.players * bulk.rewardsPerPlayer).toLocaleString('en')} rewards ` +
        `(${bulk.players} players × ${bulk.rewardsPerPlayer}), ${reads.configurations} configurations × ` +
        `${reads.gamesPerConfiguration} games, sessions of ${reads.betSlipItems} items`,
    );
    [data.main = null] = await seedMerchants(
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
  }

  const small = { configurations: 1, gamesPerConfiguration: 1, sessions: 0, betSlipItems: 0 };
  if (selected('worker-memory')) {
    progress.step(
      `seeding ${(memorySmall.players * memorySmall.rewardsPerPlayer).toLocaleString('en')} rewards for the memory comparison`,
    );
    [data.memory = null] = await seedMerchants(
      services,
      env,
      { ...small, merchants: 1, players: memorySmall.players, rewardsPerPlayer: memorySmall.rewardsPerPlayer },
      'seed-memory',
    );
  }
  if (selected('singles')) {
    progress.step(`seeding 2 × ${(2 * singles.requests).toLocaleString('en')} rewards for single cancels`);
    [data.singles = null, data.singlesBaseline = null] = await seedMerchants(
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
  }
  if (selected('redis-memory') || selected('fair-turns')) {
    progress.step('seeding 3 merchants without rewards (Redis memory, fair turns)');
    [data.redisMemory = null, data.tenantA = null, data.tenantB = null] = await seedMerchants(
      services,
      env,
      { ...small, merchants: 3, players: 0, rewardsPerPlayer: 0 },
      'seed-tenants',
    );
  }

  progress.step('vacuuming, analysing and checkpointing the template');
  await databases.settleSeedDatabase();
  return data;
}
