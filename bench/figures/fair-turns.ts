export interface FairTurnsSizes {
  /** bulkCancelByQuery jobs merchant A queues. */
  jobs: number;
  playersPerJob: number;
  rewardsPerPlayer: number;
  /** External ids in merchant B's one bulkCancel. */
  bIds: number;
}

export interface FairTurnsRun extends FairTurnsSizes {
  aRewards: number;
  /** B's request sent → B's job seen completed by the poll: what the target judges. */
  bLatencyMs: number;
  /** B's request sent → B's job finished, by the job's own timestamp (no poll lag). */
  bFinishedAfterMs: number | null;
  /** How many of A's jobs had finished before B's did (without turns: all of them). */
  aJobsFinishedBeforeB: number;
  /** A's first request sent → A's last request answered. */
  aSendMs: number;
  /** A's first request sent → A's last job finished (by the job's own timestamp). */
  aJobsMs: number | null;
  bResult: Record<string, number> | null;
  valid: boolean;
  loadAverage1m: number;
}
