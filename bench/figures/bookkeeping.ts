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
