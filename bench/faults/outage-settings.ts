import { parseArgs } from 'node:util';

/** `npm run bench:outage` flags: how long the outage lasts and how much work runs across it. */
export const OUTAGE_USAGE = `Usage: npm run bench:outage [-- flags]
  --outage-seconds N     how long Postgres is unreachable (default 150)
  --players N            players of the bulkCancelByQuery (default 2000)
  --rewards-per-player N rewards per player (default 100)
  --single-cancels N     single cancels sent around the outage (default 5000)
  --concurrency N        clients sending single cancels (default 20)
Uses DATABASE_URL and REDIS_URL (databases and a queue prefix of its own; nothing else is touched).
`;

export interface OutageSettings {
  outageSeconds: number;
  players: number;
  rewardsPerPlayer: number;
  singleCancels: number;
  concurrency: number;
}

export function parseSettings(argv: string[]): OutageSettings | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      'outage-seconds': { type: 'string' },
      players: { type: 'string' },
      'rewards-per-player': { type: 'string' },
      'single-cancels': { type: 'string' },
      concurrency: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return 'help';
  const count = (name: keyof typeof values, fallback: number) => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
    return n;
  };
  return {
    outageSeconds: count('outage-seconds', 150),
    players: count('players', 2_000),
    rewardsPerPlayer: count('rewards-per-player', 100),
    singleCancels: count('single-cancels', 5_000),
    concurrency: count('concurrency', 20),
  };
}
