/**
 * The raw baseline server's routes, each the floor of one API route (bench/README.md, "HTTP"); the
 * server and the HTTP phase share them.
 */
export const RAW_BASELINE_PATHS = {
  /** 200 without reading the body: the floor of GET /healthz. */
  bare: '/raw/bare',
  /** Signature check and one BullMQ add: the floor of the signed cancel. */
  cancel: '/raw/cancel',
  /** Signature check and one indexed lookup of a row that is the ~2 KB JSON answer: the floor of POST /betSlip. */
  betSlip: '/raw/bet-slip',
  /** Signature check and a fixed answer the size of readAll's: the floor of readAll. */
  readAll: '/raw/read-all',
} as const;

/** The raw cancel's own queue, under the run's queue prefix (deleted with it); no worker reads it. */
export const RAW_BASELINE_QUEUE = 'raw-baseline';

/** The independent server's queue (independent.mjs names it itself, sharing no code), under the run's prefix. */
export const INDEPENDENT_BASELINE_QUEUE = 'independent-baseline';
