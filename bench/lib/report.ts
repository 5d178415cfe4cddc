import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HTTP_PAIRS, type HttpPairName, type HttpResults } from '../figures/http.js';
import type { FairTurnsRun } from '../phases/fair-turns.phase.js';
import type { RedisMemoryRun } from '../phases/redis-memory.phase.js';
import type { TracingResults, TracingRouteFigures } from '../phases/tracing.phase.js';
import { httpTables } from '../report/http-tables.js';
import { bytes, count, ms, table, times } from '../report/text-table.js';
import type { Check } from './checks.js';
import type { MachineInfo } from './machine.js';
import type { StreamSummary } from './read-all-stream.js';
import type { PhaseGroup } from './settings.js';

export interface BulkCancelResults {
  rewards: number | null;
  players: number | null;
  /** Median of the 1-worker runs of the replica comparison (`runs` of them). */
  serviceMs: number | null;
  /** Median of as many raw UPDATE runs. */
  rawUpdateMs: number | null;
  runs: number;
  serviceRunsMs: number[];
  rawUpdateRunsMs: number[];
  /** The 1-worker run whose transactions and memory were sampled (the longest transaction, the peak RSS). */
  sampledRunMs: number | null;
  ratio: number | null;
  /** The same raw UPDATE also writing a job id on each reward, as the service does. */
  rawUpdateWithJobIdMs: number | null;
  ratioToSameWrite: number | null;
  /** Median of the replica comparison's 2-worker runs, which took turns with the 1-worker runs. */
  twoWorkersMs: number | null;
  /** 1 against 2 replicas running one bulk job at a time each: scale-out where the database has a core to spare. */
  scaleOutAtConcurrencyOne: { oneWorkerMs: number | null; twoWorkersMs: number | null };
  longestTransactionMs: number | null;
  readAllP99IdleMs: number | null;
  readAllP99DuringMs: number | null;
  valid: { oneWorker: boolean; withReadAllStream: boolean; rawUpdate: boolean; twoWorkers: boolean };
  details: Record<string, unknown>;
}

export interface SingleCancelResults {
  requests: number;
  /** Medians of `runs` end-to-end runs each. */
  coalescedMs: number | null;
  oneUpdatePerJobMs: number | null;
  speedup: number | null;
  runs: number;
  coalescedRunsMs: number[];
  oneUpdatePerJobRunsMs: number[];
  valid: { coalesced: boolean; oneUpdatePerJob: boolean };
  /**
   * Beyond the target: the same requests with every job stored first (queue paused), timed from the
   * resume: the workers alone, without the API's accept rate in the way.
   */
  workersAlone: {
    coalescedMs: number | null;
    oneUpdatePerJobMs: number | null;
    speedup: number | null;
    valid: boolean;
  };
  /**
   * Context for the end-to-end figure: the time the raw baseline server of the same run (JSON, HMAC,
   * one `queue.add`, nothing else on the machine) would need just to accept this many requests at its
   * measured rate, and the speedup over one UPDATE per job that this accept time alone would allow.
   */
  rawAcceptBound: { ms: number | null; speedup: number | null };
  details: Record<string, unknown>;
}

export interface WorkerMemoryResults {
  idleMiB: number | null;
  peak100kMiB: number | null;
  peak1MMiB: number | null;
  /** Rewards of the two runs (a tenth of 100,000 and 1,000,000 with --quick). */
  smallRewards: number | null;
  largeRewards: number | null;
  idleBeforeSmallMiB: number | null;
}

/**
 * Bytes the service writes for itself per cancel: pg_total_relation_size of cancellation_jobs, job_rewards
 * and job_cancel_slices before and after a run (webhook_deliveries apart; none of the bench's merchants
 * has a webhook, so it is 0 here).
 */
export interface BookkeepingResults {
  /** The first coalesced end-to-end run of single cancels, every request cancelling one reward. */
  single: { cancels: number; bytesPerCancel: number | null; webhookBytesPerCancel: number | null } | null;
  /**
   * The sampled bulkCancelByQuery: as its statements wrote it (noted slices), and once its rewards were
   * read (one page: the slices expanded into job_rewards rows, the larger figure, judged).
   */
  bulk: {
    rewards: number;
    writtenBytesPerReward: number | null;
    listedBytesPerReward: number | null;
    webhookBytesPerReward: number | null;
  } | null;
}

/** Redis memory around many large bulkCancel jobs, on a Redis server of the phase's own. */
export interface RedisMemoryResults {
  run: RedisMemoryRun | null;
  /** What the services ran with: the per-merchant cap raised so that no request is refused. */
  serviceEnv: Record<string, string>;
  /** WORKER_BULK_CONCURRENCY as the worker ran it ('default' when not set). */
  workerBulkConcurrency: string;
}

export interface BenchResults {
  bulkCancelByQuery: BulkCancelResults;
  singleCancels: SingleCancelResults;
  bookkeeping: BookkeepingResults;
  http: HttpResults | null;
  /** Absent in results written before the tracing phase existed. */
  tracing?: TracingResults | null;
  workerMemory: WorkerMemoryResults;
  redisMemory: RedisMemoryResults;
  fairTurns: FairTurnsRun | null;
  readAllStream: {
    idle: StreamSummary | null;
    during: StreamSummary | null;
    duringRuns?: number;
    /** The same stream while the raw UPDATE baseline ran (no worker): the tail the database alone gives. */
    duringRawUpdate?: StreamSummary | null;
    duringRawUpdateRuns?: number;
  };
  machine: MachineInfo;
  at: string;
  quick: boolean;
  /** `--only`: the phase groups run; null: all of them. */
  only: PhaseGroup[] | null;
  serviceEnv: Record<string, string>;
  durationSeconds: number;
  targets: TargetResult[];
  checks: Check[];
  errors: Array<{ phase: string; message: string }>;
}

export interface TargetResult {
  /** Stable across runs and sizes: the key of the target in bench/baselines/unpartitioned-2026-11-24.json. */
  key: string;
  what: string;
  target: string;
  measured: string;
  /** null: not measured, or the measurement is not valid (see checks and errors). */
  pass: boolean | null;
}

const MEMORY_HEADROOM_MIB = 100;
const SINGLE_CANCEL_BYTES = 400;
const BULK_REWARD_BYTES = 40;
export const REDIS_MEMORY_HEADROOM_MIB = 50;
const FAIR_TURN_MS = 5_000;
const BET_SLIP_P99_FACTOR = 3;
/** Tracing on (10 % sampled) keeps at least this share of the throughput with tracing off. */
const TRACING_MIN_RATIO = 0.9;
/** How far the bench's raw baseline may be from the independent minimal server and still count as the raw stack's speed. */
const BASELINE_AGREEMENT = 0.15;

/**
 * The readAll p99 while the raw UPDATE baseline ran, and its ratio to the idle p99: the tail the database's
 * work alone gives on this machine, printed beside the service's for context (it judges nothing).
 */
function rawUpdateTail(results: Pick<BenchResults, 'readAllStream' | 'bulkCancelByQuery'>): string {
  const { duringRawUpdate } = results.readAllStream;
  const p99 = duringRawUpdate?.errors === 0 ? duringRawUpdate.p99Ms : null;
  const idleP99 = results.bulkCancelByQuery.readAllP99IdleMs;
  if (p99 === null || idleP99 === null) return 'n/a';
  return `${ms(p99)}, ${(p99 / idleP99).toFixed(2)}× idle (${duringRawUpdate?.requests} answers over ${results.readAllStream.duringRawUpdateRuns} runs)`;
}

function judge(valid: boolean, ...values: Array<number | null>): boolean {
  return valid && values.every((value) => value !== null);
}

/** The performance targets, each beside what this run measured. */
export function evaluateTargets(results: Omit<BenchResults, 'targets'>): TargetResult[] {
  const bulk = results.bulkCancelByQuery;
  const singles = results.singleCancels;
  const http = results.http;
  const memory = results.workerMemory;
  const rows: TargetResult[] = [];
  const oneWorkerValid = bulk.valid.oneWorker;

  rows.push({
    key: 'bulkCancelByQuery',
    what: `bulkCancelByQuery of ${count(bulk.rewards)} rewards, request to job completed`,
    target: '≤ 1.0× one raw UPDATE',
    measured: `${times(bulk.ratio)} (${ms(bulk.serviceMs)} vs ${ms(bulk.rawUpdateMs)}, medians of ${bulk.runs})`,
    pass: judge(oneWorkerValid && bulk.valid.rawUpdate, bulk.ratio) ? (bulk.ratio as number) <= 1 : null,
  });
  rows.push({
    key: 'bulkTwoWorkers',
    what: 'the same with 2 worker replicas',
    target: 'faster than with 1',
    measured: `${ms(bulk.twoWorkersMs)} vs ${ms(bulk.serviceMs)} (medians of ${bulk.runs} runs each, taking turns)`,
    pass: judge(oneWorkerValid && bulk.valid.twoWorkers, bulk.twoWorkersMs, bulk.serviceMs)
      ? (bulk.twoWorkersMs as number) < (bulk.serviceMs as number)
      : null,
  });
  rows.push({
    key: 'singleCancels',
    what: `${count(singles.requests)} single cancels, first request to last cancelled`,
    target: '≥ 5× faster than one UPDATE per job',
    measured: `${times(singles.speedup)} (${ms(singles.coalescedMs)} vs ${ms(singles.oneUpdatePerJobMs)}, medians of ${singles.runs})`,
    pass: judge(singles.valid.coalesced && singles.valid.oneUpdatePerJob, singles.speedup)
      ? (singles.speedup as number) >= 5
      : null,
  });
  // Each API route against its floor on the raw baseline server, measured beside it (bench/README.md).
  const httpRow = (what: string, pair: HttpPairName, threshold: number) => {
    const figures = http?.pairs[pair];
    const value = http?.ratios[pair] ?? null;
    rows.push({
      key: pair,
      what,
      target: `≥ ${threshold.toFixed(2)}× raw ${figures?.baseline.route ?? 'baseline'}`,
      measured: `${times(value)} (${count(figures?.api.rps ?? null)} vs ${count(figures?.baseline.rps ?? null)} req/s)`,
      pass: value === null ? null : value >= threshold,
    });
  };
  httpRow('GET /healthz per second', 'healthz', 0.5);
  httpRow('signed cancel accepted per second', 'cancel', 0.6);
  httpRow('/betSlip (10 items) per second', 'betSlip', 0.6);
  const betSlip = http?.pairs.betSlip;
  const betSlipP99Ratio = http?.betSlipP99Ratio ?? null;
  rows.push({
    key: 'betSlipP99',
    what: '/betSlip (10 items) p99 at -c 50',
    target: `≤ ${BET_SLIP_P99_FACTOR}× raw ${betSlip?.baseline.route ?? 'baseline'} p99`,
    measured: `${times(betSlipP99Ratio)} (${ms(betSlip?.api.p99Ms ?? null)} vs ${ms(betSlip?.baseline.p99Ms ?? null)})`,
    pass: betSlipP99Ratio === null ? null : betSlipP99Ratio <= BET_SLIP_P99_FACTOR,
  });
  httpRow('readAll (50 configurations × 5 games) per second', 'readAll', 0.6);
  // The floor itself checked: the bench's raw baseline against an independent minimal server, route by route.
  const agreement = http ? HTTP_PAIRS.map((pair) => http.agreement[pair]) : [];
  const agreementKnown = agreement.length > 0 && agreement.every((value) => value !== null);
  rows.push({
    key: 'http.baselineAgreement',
    what: 'raw baseline ÷ independent minimal server, per route',
    target: `within ±${Math.round(BASELINE_AGREEMENT * 100)} % on every route`,
    measured: http ? HTTP_PAIRS.map((pair) => `${pair} ${times(http.agreement[pair])}`).join(', ') : 'n/a',
    pass: agreementKnown
      ? agreement.every((value) => Math.abs((value as number) - 1) <= BASELINE_AGREEMENT + 1e-9)
      : null,
  });
  // Each peak against the idle RSS of the same worker process, sampled just before its run.
  const memoryRow = (key: string, rewards: number | null, peak: number | null, idle: number | null, note: string) => {
    rows.push({
      key,
      what: `worker memory while cancelling ${count(rewards)} rewards`,
      target: `≤ idle + ${MEMORY_HEADROOM_MIB} MiB${note}`,
      measured: `peak ${peak ?? 'n/a'} MiB, idle ${idle ?? 'n/a'} MiB`,
      pass: peak === null || idle === null ? null : peak <= idle + MEMORY_HEADROOM_MIB,
    });
  };
  memoryRow('workerMemoryLarge', memory.largeRewards, memory.peak1MMiB, memory.idleMiB, '');
  memoryRow('workerMemorySmall', memory.smallRewards, memory.peak100kMiB, memory.idleBeforeSmallMiB, ' (flat)');
  rows.push({
    key: 'longestTransaction',
    what: 'longest transaction during a bulk cancel',
    target: '≤ 1 s',
    measured: ms(bulk.longestTransactionMs),
    pass: judge(oneWorkerValid && bulk.valid.withReadAllStream, bulk.longestTransactionMs)
      ? (bulk.longestTransactionMs as number) <= 1_000
      : null,
  });
  rows.push({
    key: 'readAllP99During',
    what: `readAll p99 while a ${count(bulk.rewards)}-reward cancel runs`,
    target: '≤ 2× its idle p99',
    measured:
      `${ms(bulk.readAllP99DuringMs)} vs idle ${ms(bulk.readAllP99IdleMs)}` +
      ` (${results.readAllStream.during?.requests ?? 'n/a'} answers over ${results.readAllStream.duringRuns ?? 'n/a'} cancels,` +
      ` ${results.readAllStream.idle?.requests ?? 'n/a'} idle); the raw UPDATE alone: ${rawUpdateTail(results)}`,
    pass: judge(oneWorkerValid, bulk.readAllP99DuringMs, bulk.readAllP99IdleMs)
      ? (bulk.readAllP99DuringMs as number) <= 2 * (bulk.readAllP99IdleMs as number)
      : null,
  });
  const redis = results.redisMemory.run;
  rows.push({
    key: 'redisMemory',
    what: `Redis memory after ${count(redis?.requests ?? null)} bulkCancel requests of ${count(redis?.idsPerRequest ?? null)} ${redis?.idLength ?? 'n/a'}-character ids have completed`,
    target: `≤ ${REDIS_MEMORY_HEADROOM_MIB} MiB above before`,
    measured: redis
      ? `+${redis.deltaMiB} MiB (${redis.beforeMiB} → ${redis.afterMiB} MiB; peak ${redis.peakMiB} MiB)`
      : 'n/a',
    pass: redis?.valid ? redis.deltaMiB <= REDIS_MEMORY_HEADROOM_MIB : null,
  });
  const { single, bulk: bulkBytes } = results.bookkeeping;
  rows.push({
    key: 'bookkeepingSingle',
    what: `bookkeeping per single cancel (${count(single?.cancels ?? null)} cancels)`,
    target: `≤ ${SINGLE_CANCEL_BYTES} bytes`,
    measured: bytes(single?.bytesPerCancel ?? null),
    pass:
      single?.bytesPerCancel != null && singles.valid.coalesced ? single.bytesPerCancel <= SINGLE_CANCEL_BYTES : null,
  });
  rows.push({
    key: 'bookkeepingBulk',
    what: `bookkeeping per bulk reward (bulkCancelByQuery of ${count(bulkBytes?.rewards ?? null)}, listed)`,
    target: `≤ ${BULK_REWARD_BYTES} bytes`,
    measured: bytes(bulkBytes?.listedBytesPerReward ?? null),
    pass:
      bulkBytes?.listedBytesPerReward != null && oneWorkerValid
        ? bulkBytes.listedBytesPerReward <= BULK_REWARD_BYTES
        : null,
  });
  const fair = results.fairTurns;
  rows.push({
    key: 'fairTurns',
    what: `a ${fair?.bIds ?? 'n/a'}-id bulkCancel behind another merchant's ${fair?.jobs ?? 'n/a'} queued ${count(fair?.playersPerJob ?? null)}-player jobs`,
    target: `completes ≤ ${FAIR_TURN_MS / 1000} s after its request`,
    measured: fair ? `${ms(fair.bLatencyMs)} (A's jobs: ${ms(fair.aJobsMs)})` : 'n/a',
    pass: fair?.valid ? fair.bLatencyMs <= FAIR_TURN_MS : null,
  });
  const tracing = results.tracing ?? null;
  for (const [route, name] of [
    ['cancel', 'signed cancel'],
    ['readAll', 'readAll'],
  ] as const) {
    const figures = tracing?.[route];
    rows.push({
      key: `tracing.${route}`,
      what: `${name} throughput, tracing on at ${Math.round((tracing?.sampleRatio ?? 0.1) * 100)} % sampling`,
      target: `≥ ${TRACING_MIN_RATIO}× tracing off`,
      measured: figures ? tracingMeasured(figures) : 'n/a',
      pass: figures?.ratio != null ? figures.ratio >= TRACING_MIN_RATIO : null,
    });
  }
  return rows;
}

/** The ratio, both throughputs, the rounds' middle half and the API's CPU per answer, on against off. */
function tracingMeasured(figures: TracingRouteFigures): string {
  const spread = figures.ratioMiddleHalf
    ? `; rounds' middle half ${figures.ratioMiddleHalf.low}–${figures.ratioMiddleHalf.high}×`
    : '';
  const cpu =
    figures.onCpuMicros !== null && figures.offCpuMicros !== null
      ? `; CPU per answer ${figures.onCpuMicros} vs ${figures.offCpuMicros} µs`
      : '';
  return `${times(figures.ratio)} (${count(figures.onRps)} vs ${count(figures.offRps)} req/s${spread}${cpu})`;
}

/**
 * The figures of the last full run before `rewards` was partitioned by merchant (2026-11-24), checked in, so
 * that every run prints its targets beside them (docs/scaling.md "Rewards partitioned by merchant").
 */
interface EarlierRun {
  run: string;
  targets: Record<string, string | null>;
}

const UNPARTITIONED_RUN = join(dirname(fileURLToPath(import.meta.url)), '../baselines/unpartitioned-2026-11-24.json');

function readEarlierRun(path: string): EarlierRun | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as EarlierRun;
  } catch {
    return null;
  }
}

/** The human-readable result: figures, then every target with pass/fail. */
export function formatReport(results: BenchResults): string {
  const bulk = results.bulkCancelByQuery;
  const singles = results.singleCancels;
  const http = results.http;
  const memory = results.workerMemory;
  const lines: string[] = [];
  lines.push(
    `Benchmark ${results.quick ? '(--quick: a tenth of the sizes; timing not judged)' : '(full)'} at ${results.at}, ` +
      `${results.durationSeconds} s`,
  );
  if (results.only !== null) lines.push(`Only the phase groups ${results.only.join(', ')} (--only); the others: n/a`);
  if (Object.keys(results.serviceEnv).length > 0) {
    lines.push(`Services configured with --env ${JSON.stringify(results.serviceEnv)}`);
  }
  const m = results.machine;
  lines.push(
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node}, PostgreSQL ${m.postgres}, ` +
      `Redis ${m.redis}; load average at start ${m.loadAverageAtStart.join(' / ')}`,
  );
  lines.push('');
  const figures: Array<[string, string]> = [
    [
      `bulkCancelByQuery, ${count(bulk.rewards)} rewards, 1 worker (median of ${bulk.runs})`,
      `${ms(bulk.serviceMs)} (${bulk.serviceRunsMs.map(ms).join(', ')})`,
    ],
    ['  2 workers, taking turns with those (median)', ms(bulk.twoWorkersMs)],
    [
      '  1 / 2 workers, one bulk job at a time each (WORKER_BULK_CONCURRENCY=1)',
      `${ms(bulk.scaleOutAtConcurrencyOne.oneWorkerMs)} / ${ms(bulk.scaleOutAtConcurrencyOne.twoWorkersMs)}`,
    ],
    [
      `  raw single UPDATE of the same rows (median of ${bulk.runs})`,
      `${ms(bulk.rawUpdateMs)} (${bulk.rawUpdateRunsMs.map(ms).join(', ')})`,
    ],
    ['  ratio service / raw UPDATE', times(bulk.ratio)],
    ['  raw UPDATE also recording the job id (same write as the service)', ms(bulk.rawUpdateWithJobIdMs)],
    ['  ratio service / that UPDATE', times(bulk.ratioToSameWrite)],
    ['  the 1-worker run sampled for transactions and memory', ms(bulk.sampledRunMs)],
    ['  longest worker transaction', ms(bulk.longestTransactionMs)],
    ['  readAll p99 idle / during', `${ms(bulk.readAllP99IdleMs)} / ${ms(bulk.readAllP99DuringMs)}`],
    ['  readAll p99 during the raw UPDATE alone (no worker)', rawUpdateTail(results)],
    [
      `single cancels, ${count(singles.requests)}, coalesced (median of ${singles.runs})`,
      `${ms(singles.coalescedMs)} (${singles.coalescedRunsMs.map(ms).join(', ')})`,
    ],
    [
      `  one UPDATE per job (median of ${singles.runs})`,
      `${ms(singles.oneUpdatePerJobMs)} (${singles.oneUpdatePerJobRunsMs.map(ms).join(', ')})`,
    ],
    ['  speedup', times(singles.speedup)],
    [
      '  raw baseline accepting as many requests (POST /raw/cancel, alone): time / speedup it allows',
      `${ms(singles.rawAcceptBound.ms)} / ${times(singles.rawAcceptBound.speedup)}`,
    ],
    [
      '  workers alone (jobs stored first): coalesced / one per job',
      `${ms(singles.workersAlone.coalescedMs)} / ${ms(singles.workersAlone.oneUpdatePerJobMs)}, ` +
        `${times(singles.workersAlone.speedup)}`,
    ],
  ];
  figures.push([
    'worker RSS idle / small run / large run',
    `${memory.idleMiB ?? 'n/a'} / ${memory.peak100kMiB ?? 'n/a'} / ${memory.peak1MMiB ?? 'n/a'} MiB ` +
      `(${count(memory.smallRewards)} and ${count(memory.largeRewards)} rewards)`,
  ]);
  const redis = results.redisMemory.run;
  if (redis) {
    figures.push([
      `Redis used_memory, ${count(redis.requests)} bulkCancel of ${count(redis.idsPerRequest)} ids: before / peak / after`,
      `${redis.beforeMiB} / ${redis.peakMiB} / ${redis.afterMiB} MiB (Δ ${redis.deltaMiB} MiB; server peak ` +
        `${redis.serverPeakMiB} MiB; all completed after ${ms(redis.completedMs)}; ${redis.retries} sent again after a 503)`,
    ]);
  }
  const { single, bulk: bulkBytes } = results.bookkeeping;
  figures.push([
    'bookkeeping per single cancel (webhook_deliveries apart)',
    `${bytes(single?.bytesPerCancel ?? null)} (webhooks ${bytes(single?.webhookBytesPerCancel ?? null)})`,
  ]);
  figures.push([
    'bookkeeping per bulkCancelByQuery reward: as written / listed (webhook_deliveries apart)',
    `${bytes(bulkBytes?.writtenBytesPerReward ?? null)} / ${bytes(bulkBytes?.listedBytesPerReward ?? null)} ` +
      `(webhooks ${bytes(bulkBytes?.webhookBytesPerReward ?? null)})`,
  ]);
  const fair = results.fairTurns;
  if (fair) {
    figures.push([
      `fair turns: B's ${fair.bIds}-id bulkCancel behind A's ${fair.jobs} × ${count(fair.playersPerJob)} players`,
      `${ms(fair.bLatencyMs)} (${fair.aJobsFinishedBeforeB} of A's jobs finished before it); ` +
        `A's ${fair.jobs} jobs ${ms(fair.aJobsMs)}`,
    ]);
  }
  lines.push(...table(['figure', 'value'], figures));
  lines.push('');
  if (http) {
    lines.push(...httpTables(http));
    lines.push('');
  }
  const earlier = readEarlierRun(UNPARTITIONED_RUN);
  lines.push(
    ...table(
      ['target', 'wanted', 'measured', 'result', 'last unpartitioned run (full)'],
      results.targets.map((row) => [
        row.what,
        row.target,
        row.measured,
        // A quick run is too small to judge timing (e.g. 1,000 players are not split across workers).
        row.pass === null ? 'n/a' : results.quick ? (row.pass ? '(pass)' : '(fail)') : row.pass ? 'PASS' : 'FAIL',
        earlier ? (earlier.targets[row.key] ?? 'not recorded') : 'n/a',
      ]),
    ),
  );
  lines.push(
    earlier ? `Last unpartitioned run: ${earlier.run}` : `Last unpartitioned run: ${UNPARTITIONED_RUN} missing`,
  );
  const failed = results.checks.filter((check) => !check.ok);
  lines.push('');
  lines.push(
    failed.length === 0 && results.errors.length === 0
      ? `Correctness: all ${results.checks.length} checks passed.`
      : `Correctness: ${failed.length} of ${results.checks.length} checks FAILED, ${results.errors.length} phase errors.`,
  );
  for (const check of failed) lines.push(`  FAILED ${check.name}: ${check.detail}`);
  for (const error of results.errors) lines.push(`  ERROR in ${error.phase}: ${error.message}`);
  return lines.join('\n');
}

export function writeResults(path: string, results: BenchResults): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}
