export interface BulkCancelRun {
  rewards: number;
  players: number;
  /** Signed request sent → job status says completed. */
  serviceMs: number;
  /** The same span as epoch milliseconds (sub-millisecond), to tell what else happened while the cancel ran. */
  ranFrom: number;
  ranTo: number;
  jobId: string;
  result: Record<string, number> | null;
  /** Where the time went, from the job's own timestamps and the rewards' cancelled_at (milliseconds). */
  breakdown: {
    /** Request sent → 200 with the job id (validation, enqueue). */
    acceptMs: number;
    /** Job stored → first batch's transaction began (queue pick-up, fan-out into child jobs). */
    toFirstBatchMs: number | null;
    /** First batch's transaction began → last batch's began (the SQL, and whatever ran between batches). */
    batchesMs: number | null;
    /** Last batch's transaction began → job finished (last batch, parent wake-up, audit row). */
    lastBatchToFinishedMs: number | null;
    /** Job finished → seen completed by the poll. */
    pollLagMs: number | null;
  };
  valid: boolean;
  /** The machine's 1-minute load average at the end of the run. */
  loadAverage1m: number;
}

export interface RawUpdateRun {
  rows: number;
  rawUpdateMs: number;
  /** The plan Postgres chose for the statement with these parameters (node types, outermost first). */
  plan: string;
  valid: boolean;
  /** When the statement was sent and when its answer came (epoch ms): the window a readAll stream is cut to. */
  ranFrom: number;
  ranTo: number;
}

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
