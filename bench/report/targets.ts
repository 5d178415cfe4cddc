import type { BenchResults, TargetResult } from '../figures/bench-results.js';
import { HTTP_PAIRS, type HttpPairName } from '../figures/http.js';
import { REDIS_MEMORY_HEADROOM_MIB } from '../figures/redis-memory.js';
import type { TracingRouteFigures } from '../figures/tracing.js';
import { bytes, count, ms, times } from './text-table.js';

/** The targets' bounds (docs/scaling.md, "The targets"). */
const MEMORY_HEADROOM_MIB = 100;
const SINGLE_CANCEL_BYTES = 400;
const BULK_REWARD_BYTES = 40;
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
export function rawUpdateTail(results: Pick<BenchResults, 'readAllStream' | 'bulkCancelByQuery'>): string {
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
