import type { VolumeSeedOptions } from '../../src/tools/seed/seed-options.js';
import type { ServiceGroup } from './processes.js';

/** A merchant made by the seed command, as its JSON report prints it (src/tools/seed/seed-report.ts). */
export interface SeededMerchant {
  id: string;
  secretKey: string;
  configurationIds: string[];
  playerIds: { first: string | null; last: string | null; count: number };
  /** The first five only. */
  sessionTokens: string[];
}

/** The seed command's volume flags, as the bench passes them (the status mix stays off: every reward ACTIVE). */
export type SeedVolume = Omit<VolumeSeedOptions, 'statusMix'>;

/**
 * Runs the real seed command (`node dist/tools/seed/seed.cli.js`, set-based SQL) against the template
 * database and returns the merchants it made. Every call makes new merchants.
 */
export async function seedMerchants(
  services: ServiceGroup,
  env: { databaseUrl: string; redisUrl: string },
  volume: SeedVolume,
  name: string,
): Promise<SeededMerchant[]> {
  const args = [
    ['--merchants', volume.merchants],
    ['--configurations', volume.configurations],
    ['--games-per-configuration', volume.gamesPerConfiguration],
    ['--players', volume.players],
    ['--rewards-per-player', volume.rewardsPerPlayer],
    ['--sessions', volume.sessions],
    ['--bet-slip-items', volume.betSlipItems],
  ].flatMap(([flag, value]) => [String(flag), String(value)]);
  const stdout = await services.run('dist/tools/seed/seed.cli.js', args, name, {
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    // The bench runs the built code as production does; its databases are made-up data on purpose.
    SEED_ALLOWED_IN_PRODUCTION: 'true',
  });
  const report = JSON.parse(stdout) as { merchants?: SeededMerchant[] };
  const merchants = report.merchants ?? [];
  if (merchants.length !== volume.merchants || merchants.some((m) => !m.id || !m.secretKey)) {
    throw new Error(
      `seed ${name}: expected ${volume.merchants} merchants with id and secretKey, got ${stdout.slice(0, 500)}`,
    );
  }
  return merchants;
}
