import { parseArgs } from 'node:util';

/** Growth figures need this much traffic: a third of it must hold enough 10 s samples for a slope. */
export const MIN_MINUTES_FOR_FIGURES = 3;

/**
 * The soak's settings: how long, and the mix it drives (fixed: 80 single cancels/s, a
 * 100-id bulkCancel every 3 s, a 20-player bulkCancelByQuery every 10 s, 30 readAll/s, job status
 * reads). Only the length is a flag; the mix is what the steady-state figures are judged on.
 */
export interface SoakSettings {
  minutes: number;
  databaseUrl: string;
  redisUrl: string;
  /** Passed to the services as RETENTION_MS (the lifetime of the service's own records). */
  retentionMs: number;
  merchants: number;
  /** Index in the merchant list of the one whose webhook receiver answers 500 throughout. */
  deadReceiverMerchant: number;
  singleCancelsPerSecond: number;
  bulkCancelEverySeconds: number;
  bulkCancelIds: number;
  queryCancelEverySeconds: number;
  queryCancelPlayers: number;
  readAllPerSecond: number;
  jobStatusPerSecond: number;
  rewardsPerPlayer: number;
  sampleEverySeconds: number;
  /** Requests of one kind in flight at most; more due than that are counted as not sent (the client fell behind). */
  maxInFlightPerKind: number;
  /** Longest wait for the queues to drain after the traffic stops. */
  drainTimeoutMs: number;
}

const MAX_MINUTES = 24 * 60;

export const SOAK_USAGE = `Usage: npm run bench:soak [-- --minutes N]

Drives the steady-state mix of traffic (80 single cancels/s, a 100-id bulkCancel every 3 s, a 20-player
bulkCancelByQuery every 10 s, 30 readAll/s, job status reads; one merchant's webhook receiver answering
500 throughout) for N minutes against the built API and one worker, on a database and queue prefix of
its own, with RETENTION_MS=120000. Samples table sizes, Redis memory, each process's RSS and latency
percentiles, and writes bench/results/soak.json.
  --minutes N    length of the traffic, a whole number from 1 to ${MAX_MINUTES} (default 12; 1 is a smoke
                 run: correctness only, the growth figures need at least 3 minutes)
  --help         this text
Exits non-zero only when a correctness check fails (a reward answered 200 not CANCELLED, the queues not
draining) or the soak cannot run; the steady-state figures are reported, never fatal.
`;

export function parseSoakArgs(argv: readonly string[], env: Record<string, string | undefined>): SoakSettings | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      minutes: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const minutes = values.minutes === undefined ? 12 : parseMinutes(values.minutes);
  return {
    minutes,
    databaseUrl: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
    retentionMs: 120_000,
    merchants: 4,
    deadReceiverMerchant: 0,
    singleCancelsPerSecond: 80,
    bulkCancelEverySeconds: 3,
    bulkCancelIds: 100,
    queryCancelEverySeconds: 10,
    queryCancelPlayers: 20,
    readAllPerSecond: 30,
    jobStatusPerSecond: 10,
    rewardsPerPlayer: 10,
    sampleEverySeconds: 10,
    maxInFlightPerKind: 400,
    drainTimeoutMs: 5 * 60_000,
  };
}

function parseMinutes(text: string): number {
  const minutes = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isInteger(minutes) || minutes < 1 || minutes > MAX_MINUTES) {
    throw new Error(`--minutes wants a whole number from 1 to ${MAX_MINUTES}, got '${text}'`);
  }
  return minutes;
}

/**
 * Rewards the run needs, per merchant, with a fifth to spare (a client that falls behind sends fewer,
 * never more): ids for the single and bulk cancels, and whole players for the query cancels.
 */
export function seedSizes(settings: SoakSettings): { idPlayers: number; queryPlayers: number } {
  const seconds = settings.minutes * 60;
  const spare = 1.2;
  const idRewards =
    seconds * settings.singleCancelsPerSecond + (seconds / settings.bulkCancelEverySeconds) * settings.bulkCancelIds;
  const queryPlayers = (seconds / settings.queryCancelEverySeconds) * settings.queryCancelPlayers;
  return {
    idPlayers: Math.ceil((idRewards * spare) / settings.rewardsPerPlayer / settings.merchants),
    queryPlayers: Math.ceil((queryPlayers * spare) / settings.merchants),
  };
}

/** What the run's configuration means for its figures, said in the output and the JSON. */
export function describeConfiguration(settings: SoakSettings): string[] {
  const notes = [`RETENTION_MS=${settings.retentionMs} passed to the services`];
  if (settings.minutes < MIN_MINUTES_FOR_FIGURES) {
    notes.push(
      `a ${settings.minutes}-minute run is a smoke run: the growth and p99 figures need at least ` +
        `${MIN_MINUTES_FOR_FIGURES} minutes and are reported as n/a`,
    );
  }
  return notes;
}
