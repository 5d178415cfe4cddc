import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * Sizes of a run. The full run uses the targets' sizes; `--quick` a tenth of them (and short HTTP
 * runs), fast enough for CI to use as a smoke test, where only correctness is judged.
 */
export interface BenchSettings {
  quick: boolean;
  databaseUrl: string;
  redisUrl: string;
  /**
   * The bulkCancelByQuery data: players × rewards each, one merchant. `replicaPairs`: how many times 1
   * and then 2 worker replicas cancel the same rewards, alternately, and how many times the raw UPDATE
   * runs; medians are compared (one run of a setting moves by more than the differences looked for).
   */
  bulk: { players: number; rewardsPerPlayer: number; replicaPairs: number };
  /** The smaller bulk cancel whose worker memory is compared with the large one. */
  memorySmall: { players: number; rewardsPerPlayer: number };
  /** readAll and /betSlip data. */
  reads: { configurations: number; gamesPerConfiguration: number; betSlipItems: number };
  /**
   * `runs`: end-to-end runs of each side, each on a fresh copy, the sides taking turns; their medians make
   * the ratio (see single-cancels.phase.ts).
   */
  singles: { requests: number; connections: number; rewardsPerPlayer: number; runs: number };
  http: { durationSeconds: number; warmupSeconds: number; connections: number; rounds: number };
  /**
   * The tracing phase's runs: many short pairs rather than a few long ones, since one round moves by ±15 %
   * on its own and the median needs many (see tracing.phase.ts); after a warm-up long enough for the code
   * that only sampled requests and the exports reach to be optimised: after 5 s the traced API still spent
   * 30–60 µs more per signed cancel for another ~15 s, and was within the noise after that (2026-11-28).
   */
  tracing: { durationSeconds: number; warmupSeconds: number; rounds: number };
  /** `cancelRuns`: cancels run under the stream, their answers pooled for one p99 (see read-all-stream.phase.ts). */
  readAllStream: {
    connections: number;
    requestsPerSecond: number;
    idleMs: number;
    warmupMs: number;
    cancelRuns: number;
  };
  /** Worker RSS sampled this long with nothing to do, before the first cancel. */
  idleMemoryMs: number;
  pollIntervalMs: number;
  /** Longest wait for one cancel run to finish before the run is declared failed. */
  runTimeoutMs: number;
  /**
   * Redis memory after large bulk jobs: `requests` bulkCancel requests of `idsPerRequest` random ids of
   * `idLength` characters (none exists), `concurrency` in flight, on a Redis server of the phase's own.
   * `maxQueuedJobs` is the services' per-merchant cap on bulk jobs queued or running (MAX_QUEUED_JOBS).
   */
  redisMemory: {
    requests: number;
    idsPerRequest: number;
    idLength: number;
    concurrency: number;
    maxQueuedJobs: number;
  };
  /** Fair turns: merchant A queues `jobs` bulkCancelByQuery jobs, then merchant B one bulkCancel of `bIds` ids. */
  fairTurns: { jobs: number; playersPerJob: number; rewardsPerPlayer: number; bIds: number };
  /** `--only`: the phase groups to run; null runs them all. */
  only: ReadonlySet<PhaseGroup> | null;
  /**
   * `--env KEY=VALUE` (repeatable): extra configuration for every API and worker process, to try a
   * knob of src/shared/config/config.ts (CANCEL_BATCH_SIZE, WORKER_BULK_CONCURRENCY, LOG_LEVEL …) without
   * editing code. A run's own settings (the single-cancel baseline's COALESCE_MAX_BATCH=1) win.
   */
  serviceEnv: Record<string, string>;
  /** `--profile`: API and worker processes run with `node --cpu-prof` (bench/results/profiles/). */
  profile: boolean;
  /**
   * `--candidate NAME=DIR` (repeatable): another checkout's built API (DIR/dist/api/index.js), measured
   * by the HTTP phase beside this one and its twin, in the same rounds (bench/README.md, "Candidates").
   */
  candidates: HttpCandidate[];
}

/** Another build of the API, measured beside this checkout's. */
interface HttpCandidate {
  name: string;
  /** The checkout's absolute path: the process runs there, from its own dist/. */
  dir: string;
}

/** The phase groups `--only` can name, in the order they run. */
const PHASE_GROUPS = ['http', 'tracing', 'singles', 'bulk', 'worker-memory', 'redis-memory', 'fair-turns'] as const;
export type PhaseGroup = (typeof PHASE_GROUPS)[number];

/** What the benchmark sets itself to keep the run isolated; `--env` may not change them. */
const RESERVED_ENV = new Set([
  'DATABASE_URL',
  'REDIS_URL',
  'QUEUE_PREFIX',
  'PORT',
  'ADMIN_PORT',
  'WORKER_PORT',
  'HOST',
  'PATH',
]);

export const USAGE = `Usage: npm run bench [-- [--quick] [--only GROUP,...] [--env KEY=VALUE ...] [--candidate NAME=DIR ...]]

Measures the performance targets against their baselines, on a database and queue prefix of
its own (DATABASE_URL's server, REDIS_URL), and writes bench/results/latest.json.
  --quick          a tenth of the sizes, 2 s HTTP runs (two to three minutes)
  --only GROUP,... run only these phase groups (${PHASE_GROUPS.join(', ')}); the
                   data the others need is not seeded
  --env KEY=VALUE  extra configuration for every API and worker process (repeatable), e.g.
                   --env WORKER_BULK_CONCURRENCY=1 --env LOG_LEVEL=warn
  --candidate NAME=DIR
                   the HTTP phase also measures DIR's built API (DIR/dist/api/index.js, run
                   in DIR, same environment) in the same rounds as this one (repeatable)
  --http-rounds N  the HTTP phase's rounds (default 8; 1 with --quick)
  --http-seconds S each HTTP run's length in seconds (default 3; 2 with --quick)
  --profile        run the API and workers under node --cpu-prof; their CPU profiles land
                   in bench/results/profiles/ (open them in Chrome DevTools, or summarise
                   them with: npx tsx bench/profile-summary.ts FILE.cpuprofile)
  --help           this text
Every run checks correctness (every targeted reward cancelled, counts equal to the rows, no request
errors) and exits non-zero if anything is wrong; timing never fails the run.
`;

export function parseBenchArgs(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): BenchSettings | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      quick: { type: 'boolean' },
      env: { type: 'string', multiple: true },
      only: { type: 'string' },
      profile: { type: 'boolean' },
      candidate: { type: 'string', multiple: true },
      'http-rounds': { type: 'string' },
      'http-seconds': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const serviceEnv: Record<string, string> = {};
  for (const assignment of values.env ?? []) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/s.exec(assignment);
    if (!match?.[1] || match[2] === undefined) throw new Error(`--env wants KEY=VALUE, got '${assignment}'`);
    if (RESERVED_ENV.has(match[1])) throw new Error(`--env cannot change ${match[1]}: the benchmark sets it`);
    serviceEnv[match[1]] = match[2];
  }
  const only = values.only === undefined ? null : parseOnly(values.only);
  const quick = values.quick === true;
  const scale = quick ? 0.1 : 1;
  return {
    quick,
    databaseUrl: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
    bulk: { players: 10_000 * scale, rewardsPerPlayer: 100, replicaPairs: quick ? 1 : 3 },
    memorySmall: { players: 1_000 * scale, rewardsPerPlayer: 100 },
    reads: { configurations: 50, gamesPerConfiguration: 5, betSlipItems: 10 },
    singles: { requests: 20_000 * scale, connections: 100, rewardsPerPlayer: 100, runs: quick ? 1 : 3 },
    // Many short interleaved rounds: every figure is a median over them (bench/README.md, "How it measures").
    http: {
      durationSeconds: positive('--http-seconds', values['http-seconds']) ?? (quick ? 2 : 3),
      warmupSeconds: quick ? 0.5 : 3,
      connections: 50,
      rounds: positive('--http-rounds', values['http-rounds'], true) ?? (quick ? 1 : 8),
    },
    tracing: { durationSeconds: 2, warmupSeconds: quick ? 0.5 : 20, rounds: quick ? 1 : 12 },
    // Light, so that the stream itself does not slow the cancel it watches: 20 requests in flight at
    // most, 40 per second in all (a readAll cost ~10 ms of server time, measured 2026-11-20).
    // Idle for 10 s in a full run: ~400 samples, so that the idle p99 is not just the third-worst request.
    readAllStream: {
      connections: 20,
      requestsPerSecond: 40,
      idleMs: quick ? 2_000 : 10_000,
      warmupMs: 1_000,
      cancelRuns: quick ? 1 : 6,
    },
    idleMemoryMs: quick ? 1_000 : 3_000,
    pollIntervalMs: 50,
    runTimeoutMs: quick ? 120_000 : 600_000,
    // Each request body is ~2 MB (the API's default BODY_LIMIT_BYTES is 2 MiB): a few in flight keep
    // the API and worker busy without queueing hundreds of megabytes in the load generator.
    redisMemory: {
      requests: quick ? 50 : 1_000,
      idsPerRequest: 10_000,
      idLength: 200,
      concurrency: 4,
      maxQueuedJobs: 2_000,
    },
    fairTurns: { jobs: quick ? 10 : 50, playersPerJob: quick ? 200 : 2_000, rewardsPerPlayer: 3, bIds: 10 },
    only,
    serviceEnv,
    profile: values.profile === true,
    candidates: parseCandidates(values.candidate ?? []),
  };
}

/** A positive number given on the command line (a whole one when `whole`), or undefined when not given. */
function positive(option: string, text: string | undefined, whole = false): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!(value > 0) || (whole && !Number.isInteger(value))) {
    throw new Error(`${option} wants a positive ${whole ? 'whole ' : ''}number, got '${text}'`);
  }
  return value;
}

/** The built API entry point a candidate checkout must have. */
const CANDIDATE_ENTRY = 'dist/api/index.js';

function parseCandidates(assignments: readonly string[]): HttpCandidate[] {
  const candidates: HttpCandidate[] = [];
  for (const assignment of assignments) {
    const match = /^([a-z0-9][a-z0-9_-]*)=(.+)$/is.exec(assignment);
    if (!match?.[1] || !match[2]) throw new Error(`--candidate wants NAME=DIR, got '${assignment}'`);
    const name = match[1];
    if (['baseline', 'independent', 'api', 'twin'].includes(name) || candidates.some((known) => known.name === name)) {
      throw new Error(`--candidate: the name '${name}' is taken`);
    }
    const dir = resolve(match[2]);
    if (!existsSync(join(dir, CANDIDATE_ENTRY))) {
      throw new Error(`--candidate ${name}: ${join(dir, CANDIDATE_ENTRY)} is missing (run npm run build in ${dir})`);
    }
    candidates.push({ name, dir });
  }
  return candidates;
}

function parseOnly(list: string): Set<PhaseGroup> {
  const groups = new Set<PhaseGroup>();
  for (const name of list.split(',').map((part) => part.trim())) {
    const group = PHASE_GROUPS.find((known) => known === name);
    if (!group) throw new Error(`--only: unknown phase group '${name}' (known: ${PHASE_GROUPS.join(', ')})`);
    groups.add(group);
  }
  return groups;
}
