export interface WorkerMemoryResults {
  idleMiB: number | null;
  peak100kMiB: number | null;
  peak1MMiB: number | null;
  /** Rewards of the two runs (a tenth of 100,000 and 1,000,000 with --quick). */
  smallRewards: number | null;
  largeRewards: number | null;
  idleBeforeSmallMiB: number | null;
}
