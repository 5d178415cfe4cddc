import type { Check } from '../lib/checks.js';
import type { MachineInfo } from '../lib/machine.js';
import type { StreamSummary } from '../lib/read-all-stream.js';
import type { PhaseGroup } from '../lib/settings.js';
import type { BookkeepingResults } from './bookkeeping.js';
import type { BulkCancelResults } from './bulk-cancel.js';
import type { FairTurnsRun } from './fair-turns.js';
import type { HttpResults } from './http.js';
import type { RedisMemoryResults } from './redis-memory.js';
import type { SingleCancelResults } from './single-cancels.js';
import type { TracingResults } from './tracing.js';
import type { WorkerMemoryResults } from './worker-memory.js';

/** A whole run's figures, as bench/results/latest.json holds them. */
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
  /** Stable across runs and sizes: the key of the target in bench/results/history.ndjson. */
  key: string;
  what: string;
  target: string;
  measured: string;
  /** null: not measured, or the measurement is not valid (see checks and errors). */
  pass: boolean | null;
}
