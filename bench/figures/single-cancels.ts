import type { LoadFigures } from '../lib/http-load.js';

export interface SingleCancelRun {
  requests: number;
  /**
   * end-to-end: first request sent → the last of the rewards seen CANCELLED in the database.
   * drain: the jobs all stored first (queue paused) → queue resumed → the last reward CANCELLED.
   */
  ms: number;
  /** First request sent → last request answered (every job stored). */
  acceptMs: number;
  /** First to last committed batch, by the rewards' cancelled_at (each batch's transaction start). */
  sqlSpanMs: number | null;
  http: LoadFigures;
  valid: boolean;
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
