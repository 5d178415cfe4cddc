import { type CommandLine, type FlagValues, parseCommandLine, parseWholeNumber } from '../command-line.js';

/** Volumes of a generated seed; counts marked "per merchant" repeat for every merchant. */
export interface VolumeSeedOptions {
  merchants: number;
  /** Per merchant. */
  configurations: number;
  gamesPerConfiguration: number;
  /** Per merchant. */
  players: number;
  rewardsPerPlayer: number;
  /** Per merchant. */
  sessions: number;
  betSlipItems: number;
  /** ~10 % of rewards USED and ~5 % EXPIRED instead of all ACTIVE. */
  statusMix: boolean;
}

export type SeedCommand = CommandLine<
  { kind: 'demo'; reset: boolean } | { kind: 'volume'; options: VolumeSeedOptions }
>;

export const DEFAULT_VOLUME: VolumeSeedOptions = {
  merchants: 1,
  configurations: 5,
  gamesPerConfiguration: 3,
  players: 100,
  rewardsPerPlayer: 10,
  sessions: 10,
  betSlipItems: 3,
  statusMix: false,
};

/** Sanity caps: a typo (an extra zero or three) should fail fast, not fill the disk. */
const MAX_TOTAL_REWARDS = 100_000_000;
const MAX_GAMES_PER_CONFIGURATION = 1_000;

const countFlags = {
  merchants: 'merchants',
  configurations: 'configurations',
  'games-per-configuration': 'gamesPerConfiguration',
  players: 'players',
  'rewards-per-player': 'rewardsPerPlayer',
  sessions: 'sessions',
  'bet-slip-items': 'betSlipItems',
} as const satisfies Record<string, keyof VolumeSeedOptions>;

type CountFlag = keyof typeof countFlags;

export const SEED_USAGE = `Usage: npm run seed [-- <flags>]

Without flags: loads the demo set (merchant 00000000-0000-4000-8000-000000000001, secret
demo-secret-key-change-me, session tokens demo-session-token and demo-expired-token). Safe to repeat.

  --reset                       first delete the demo merchant's data (configurations, players,
                                wallets, rewards, sessions) and load it afresh: cancelled demo
                                rewards are ACTIVE again, a rotated secret is the demo secret again

With any of these flags: generates new merchants (random ids and secrets) with these volumes.
  --merchants N                 merchants to create (default ${DEFAULT_VOLUME.merchants})
  --configurations N            reward configurations per merchant (default ${DEFAULT_VOLUME.configurations})
  --games-per-configuration N   games per configuration (default ${DEFAULT_VOLUME.gamesPerConfiguration})
  --players N                   players per merchant, each with a wallet (default ${DEFAULT_VOLUME.players})
  --rewards-per-player N        rewards per player (default ${DEFAULT_VOLUME.rewardsPerPlayer})
  --sessions N                  valid sessions per merchant (default ${DEFAULT_VOLUME.sessions})
  --bet-slip-items N            bet slip items per session (default ${DEFAULT_VOLUME.betSlipItems})
  --status-mix                  make ~10% of rewards USED and ~5% EXPIRED (default: all ACTIVE)
  --help                        print this text

Prints one JSON document on stdout: merchants (id, secretKey, configurationIds, playerIds, sample
reward ids, up to 5 session tokens), totals and ms. Logs go to stderr.

Example: npm run seed -- --merchants 1 --players 10000 --rewards-per-player 100
`;

const seedFlags = {
  'status-mix': { type: 'boolean' },
  reset: { type: 'boolean' },
  ...Object.fromEntries(Object.keys(countFlags).map((flag) => [flag, { type: 'string' as const }])),
} as const;

export function parseSeedArgs(argv: readonly string[]): SeedCommand {
  return parseCommandLine(argv, seedFlags, toSeedCommand);
}

function toSeedCommand(values: FlagValues): SeedCommand {
  const options: VolumeSeedOptions = { ...DEFAULT_VOLUME, statusMix: values['status-mix'] === true };
  let volumeRequested = options.statusMix;
  for (const [flag, key] of Object.entries(countFlags) as Array<[CountFlag, (typeof countFlags)[CountFlag]]>) {
    const raw = values[flag];
    if (raw === undefined) continue;
    volumeRequested = true;
    const count = parseWholeNumber(String(raw));
    if (count === null) return { kind: 'invalid', message: `--${flag} must be a whole number >= 0, got '${raw}'` };
    options[key] = count;
  }
  const reset = values.reset === true;
  if (!volumeRequested) return { kind: 'demo', reset };
  if (reset) return { kind: 'invalid', message: '--reset applies to the demo set only; it takes no volume flags' };

  const problem = checkVolume(options);
  return problem ? { kind: 'invalid', message: problem } : { kind: 'volume', options };
}

function checkVolume(options: VolumeSeedOptions): string | null {
  if (options.merchants < 1) return '--merchants must be at least 1';
  if (options.rewardsPerPlayer > 0 && options.players > 0 && options.configurations < 1) {
    return 'rewards need a configuration: --configurations must be at least 1';
  }
  if (options.sessions > 0 && options.players < 1) return 'sessions need a player: --players must be at least 1';
  if (options.gamesPerConfiguration > MAX_GAMES_PER_CONFIGURATION) {
    return `--games-per-configuration must be at most ${MAX_GAMES_PER_CONFIGURATION}`;
  }
  const totalRewards = options.merchants * options.players * options.rewardsPerPlayer;
  if (totalRewards > MAX_TOTAL_REWARDS) {
    return `that is ${totalRewards} rewards; at most ${MAX_TOTAL_REWARDS} are generated in one run`;
  }
  return null;
}
