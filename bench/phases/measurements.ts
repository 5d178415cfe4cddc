import type { BenchResults } from '../figures/bench-results.js';
import type { BookkeepingResults } from '../figures/bookkeeping.js';
import type { BulkCancelResults, BulkCancelRun, RawUpdateRun } from '../figures/bulk-cancel.js';
import type { FairTurnsRun } from '../figures/fair-turns.js';
import type { HttpResults } from '../figures/http.js';
import type { RedisMemoryResults } from '../figures/redis-memory.js';
import type { SingleCancelResults, SingleCancelRun } from '../figures/single-cancels.js';
import type { TracingResults } from '../figures/tracing.js';
import type { WorkerMemoryResults } from '../figures/worker-memory.js';
import { median, ratio } from '../lib/percentiles.js';
import type { BenchSettings } from '../lib/settings.js';
import type { TransactionSampler } from '../lib/transaction-sampler.js';
import type { PhaseErrors } from './runner.js';

export type TransactionSampling = Awaited<ReturnType<TransactionSampler['stop']>>;

/** What the phases measured, filled in as they run; a phase that did not run leaves its fields empty. */
export interface Measurements {
  http: HttpResults | null;
  tracing: TracingResults | null;
  /** The end-to-end runs of each side. */
  coalesced: SingleCancelRun[];
  oneUpdatePerJob: SingleCancelRun[];
  coalescedDrain: SingleCancelRun | null;
  oneUpdatePerJobDrain: SingleCancelRun | null;
  oneWorker: BulkCancelRun | null;
  /** The replica comparison's runs, in order. */
  replicaRuns: { one: BulkCancelRun[]; two: BulkCancelRun[] };
  /** The same, one pair, with WORKER_BULK_CONCURRENCY=1. */
  replicaScaleOut: { one: BulkCancelRun[]; two: BulkCancelRun[] };
  /** The raw UPDATE, as many runs as the replica comparison has pairs. */
  rawRuns: RawUpdateRun[];
  rawWithJobId: RawUpdateRun | null;
  longestTransaction: TransactionSampling | null;
  underReadLoad: BulkCancelRun | null;
  longestTransactionUnderReadLoad: TransactionSampling | null;
  fairTurns: FairTurnsRun | null;
  streams: PhaseResults['readAllStream'];
  memory: WorkerMemoryResults;
  redisMemory: RedisMemoryResults;
  bookkeeping: BookkeepingResults;
}

export interface PhaseResults {
  bulkCancelByQuery: BulkCancelResults;
  singleCancels: SingleCancelResults;
  bookkeeping: BookkeepingResults;
  http: HttpResults | null;
  tracing: TracingResults | null;
  workerMemory: WorkerMemoryResults;
  redisMemory: RedisMemoryResults;
  fairTurns: FairTurnsRun | null;
  readAllStream: BenchResults['readAllStream'];
  errors: PhaseErrors;
}

/** The Redis-memory phase's per-merchant cap, raised so that none of its requests is refused. */
export function redisMemoryEnv(settings: BenchSettings): Record<string, string> {
  return { MAX_QUEUED_JOBS: String(settings.redisMemory.maxQueuedJobs) };
}

export function emptyMeasurements(settings: BenchSettings): Measurements {
  return {
    http: null,
    tracing: null,
    coalesced: [],
    oneUpdatePerJob: [],
    coalescedDrain: null,
    oneUpdatePerJobDrain: null,
    oneWorker: null,
    replicaRuns: { one: [], two: [] },
    replicaScaleOut: { one: [], two: [] },
    rawRuns: [],
    rawWithJobId: null,
    longestTransaction: null,
    underReadLoad: null,
    longestTransactionUnderReadLoad: null,
    fairTurns: null,
    streams: { idle: null, during: null },
    memory: {
      idleMiB: null,
      peak100kMiB: null,
      peak1MMiB: null,
      smallRewards: null,
      largeRewards: null,
      idleBeforeSmallMiB: null,
    },
    bookkeeping: { single: null, bulk: null },
    redisMemory: {
      run: null,
      serviceEnv: redisMemoryEnv(settings),
      workerBulkConcurrency: settings.serviceEnv.WORKER_BULK_CONCURRENCY ?? 'default',
    },
  };
}

/** The figures of latest.json from what the phases measured: medians and verdicts over repeated runs. */
export function phaseResults(settings: BenchSettings, measured: Measurements, errors: PhaseErrors): PhaseResults {
  const { oneWorker, replicaRuns, rawRuns, coalesced, oneUpdatePerJob, longestTransaction } = measured;
  // A median or a verdict over repeated runs only when every run planned was made.
  const medianOf = (values: readonly number[], planned: number) => (values.length === planned ? median(values) : null);
  const allValid = (runs: readonly { valid: boolean }[], planned: number) =>
    runs.length === planned && runs.every((run) => run.valid);
  const { replicaPairs: bulkRuns } = settings.bulk;
  const replicaMedian = (runs: readonly BulkCancelRun[]) =>
    medianOf(
      runs.map((run) => run.serviceMs),
      bulkRuns,
    );
  const { coalescedDrain, oneUpdatePerJobDrain, underReadLoad, longestTransactionUnderReadLoad } = measured;
  // The longest transaction of either 1-worker run: with and without the readAll stream.
  const longestTransactions = [longestTransaction, longestTransactionUnderReadLoad].flatMap((sampling) =>
    sampling ? [sampling.longestMs] : [],
  );
  const serviceMs = replicaMedian(replicaRuns.one);
  const rawUpdateMs = medianOf(
    rawRuns.map((run) => run.rawUpdateMs),
    bulkRuns,
  );
  const singlesMedian = (side: readonly SingleCancelRun[]) =>
    medianOf(
      side.map((run) => run.ms),
      settings.singles.runs,
    );
  const coalescedMs = singlesMedian(coalesced);
  const oneUpdatePerJobMs = singlesMedian(oneUpdatePerJob);
  const { idle, during } = measured.streams;
  return {
    bulkCancelByQuery: {
      rewards: oneWorker?.rewards ?? null,
      players: oneWorker?.players ?? null,
      serviceMs,
      rawUpdateMs,
      runs: settings.bulk.replicaPairs,
      serviceRunsMs: replicaRuns.one.map((run) => run.serviceMs),
      rawUpdateRunsMs: rawRuns.map((run) => run.rawUpdateMs),
      sampledRunMs: oneWorker?.serviceMs ?? null,
      ratio: ratio(serviceMs, rawUpdateMs),
      rawUpdateWithJobIdMs: measured.rawWithJobId?.rawUpdateMs ?? null,
      ratioToSameWrite: ratio(serviceMs, measured.rawWithJobId?.rawUpdateMs ?? null),
      twoWorkersMs: replicaMedian(replicaRuns.two),
      scaleOutAtConcurrencyOne: {
        oneWorkerMs: measured.replicaScaleOut.one[0]?.serviceMs ?? null,
        twoWorkersMs: measured.replicaScaleOut.two[0]?.serviceMs ?? null,
      },
      longestTransactionMs: longestTransactions.length > 0 ? Math.max(...longestTransactions) : null,
      readAllP99IdleMs: idle?.errors === 0 ? idle.p99Ms : null,
      readAllP99DuringMs: during?.errors === 0 ? during.p99Ms : null,
      valid: {
        oneWorker: (oneWorker?.valid ?? false) && allValid(replicaRuns.one, bulkRuns),
        withReadAllStream: underReadLoad?.valid ?? false,
        rawUpdate: allValid(rawRuns, bulkRuns),
        twoWorkers: allValid(replicaRuns.two, bulkRuns),
      },
      details: {
        sampledOneWorker: oneWorker,
        replicaComparison: replicaRuns,
        replicaScaleOutAtConcurrencyOne: measured.replicaScaleOut,
        rawUpdate: rawRuns,
        rawUpdateWithJobId: measured.rawWithJobId,
        oneWorkerWithReadAllStream: underReadLoad,
        transactionSampling: { oneWorker: longestTransaction, withReadAllStream: longestTransactionUnderReadLoad },
      },
    },
    singleCancels: {
      requests: settings.singles.requests,
      coalescedMs,
      oneUpdatePerJobMs,
      speedup: ratio(oneUpdatePerJobMs, coalescedMs, 2),
      runs: settings.singles.runs,
      coalescedRunsMs: coalesced.map((run) => run.ms),
      oneUpdatePerJobRunsMs: oneUpdatePerJob.map((run) => run.ms),
      valid: {
        coalesced: allValid(coalesced, settings.singles.runs),
        oneUpdatePerJob: allValid(oneUpdatePerJob, settings.singles.runs),
      },
      workersAlone: {
        coalescedMs: coalescedDrain?.ms ?? null,
        oneUpdatePerJobMs: oneUpdatePerJobDrain?.ms ?? null,
        speedup: ratio(oneUpdatePerJobDrain?.ms, coalescedDrain?.ms, 2),
        valid: (coalescedDrain?.valid ?? false) && (oneUpdatePerJobDrain?.valid ?? false),
      },
      rawAcceptBound: rawAcceptBound(settings.singles.requests, measured.http, oneUpdatePerJobMs),
      details: { coalesced, oneUpdatePerJob, coalescedDrain, oneUpdatePerJobDrain },
    },
    bookkeeping: measured.bookkeeping,
    http: measured.http,
    tracing: measured.tracing,
    workerMemory: measured.memory,
    redisMemory: measured.redisMemory,
    fairTurns: measured.fairTurns,
    readAllStream: measured.streams,
    errors,
  };
}

/** See SingleCancelResults.rawAcceptBound. */
function rawAcceptBound(requests: number, http: HttpResults | null, oneUpdatePerJobMs: number | null) {
  const rps = http?.pairs.cancel.baseline.rps ?? null;
  const ms = rps ? Math.round((requests / rps) * 1_000) : null;
  return { ms, speedup: ratio(oneUpdatePerJobMs, ms, 2) };
}
