import type { Job } from 'bullmq';
import type { QueryFilter } from '../../shared/cancellations/query-filter.js';
import type { QueryCursor } from '../../shared/jobs/job-catalogue.js';
import { inSpan } from '../../shared/telemetry/trace-context.js';
import { abortRequested, yieldIfStopping } from '../jobs/stop-checks.js';
import type { WorkerDeps } from '../worker-context.js';
import { cancelRewardsOfPlayers, cancelSliceOfPlayers, countCancelledByJob } from './query-cancellations.repository.js';

export interface QueryWork {
  /** The merchant's job id, recorded on each reward it cancels. */
  rootJobId: string;
  merchantId: string;
  /** Sorted and distinct. */
  playerIds: readonly string[];
  filter: QueryFilter;
  cursor?: QueryCursor;
}

/** The player array sent with each statement stays at most this long: long arrays cost planning time on every statement. */
const MAX_SLICE_PLAYERS = 1_000;

/**
 * Players per slice for an expected number of rewards per player (100 before any has been seen), with
 * `remaining` players left. Aimed a little under one batch, so that a slice of players holding a few
 * more rewards than the average still fits its one statement; and the remaining players are shared
 * out evenly, so that a job does not end on a slice of a handful of players (a whole statement for a
 * few rows: 1,000 players at 90 a slice were 11 slices and one of 10, now 12 of 83 or 84).
 */
function sliceFor(batchSize: number, rewardsPerPlayer: number, remaining: number): number {
  const players = Math.floor((0.9 * batchSize) / Math.max(rewardsPerPlayer, 1));
  const most = Math.max(1, Math.min(MAX_SLICE_PLAYERS, players));
  if (remaining <= most) return Math.max(1, remaining);
  return Math.ceil(remaining / Math.ceil(remaining / most));
}

/**
 * Walks the players in slices sized to about one batch of rewards (adapted to the rewards per player
 * seen so far), cancelling each slice's ACTIVE rewards in transactions of at most CANCEL_BATCH_SIZE.
 * After each slice the cursor (where the next slice starts, its size, the counts so far) is saved on
 * the job, so a retry after a crash resumes there. Work of the slice in flight at the crash (the first
 * slice included, before any cursor exists) is recounted from the rewards themselves (they carry the
 * job id), so the final count stays exact.
 * Memory stays flat: nothing but one slice of player ids and a few counters is held.
 */
export async function cancelByQuery(
  deps: WorkerDeps,
  job: Job,
  token: string | undefined,
  work: QueryWork,
): Promise<{ players: number; cancelled: number }> {
  const batchSize = deps.config.CANCEL_BATCH_SIZE;
  const players = work.playerIds;
  let cursor: QueryCursor = work.cursor ?? {
    playerIndex: 0,
    sliceSize: sliceFor(batchSize, 100, players.length),
    cancelled: 0,
    picked: 0,
  };
  // The job may be running again (a crash, a lost lock, a hand-back, a database outage, a redelivery),
  // and batches of the slice in flight may have committed after the last checkpoint — in the first
  // slice there is no checkpoint at all, and nothing on the job says for sure whether it ran before (a
  // job stored again under its id starts its counters afresh). So the slice it starts with is always
  // counted from the rewards themselves (they carry the job id), and the total stays exact on every
  // path; a job that has listed nothing for these players is answered 0 without reading them.
  let carried = await countCancelledByJob(deps.db, {
    jobId: work.rootJobId,
    merchantId: work.merchantId,
    playerIds: players.slice(cursor.playerIndex, cursor.playerIndex + cursor.sliceSize),
  });

  // Before every statement: hand the job back if the worker is stopping; true if the merchant aborted it
  // (the job then stops; what was applied stays and is counted).
  const stopBeforeNextStatement = async () => {
    await yieldIfStopping(deps, job, token);
    return abortRequested(deps, work.rootJobId);
  };

  while (cursor.playerIndex < players.length) {
    const slice = players.slice(cursor.playerIndex, cursor.playerIndex + cursor.sliceSize);
    let sliceCancelled = carried;
    carried = 0;
    const query = { jobId: work.rootJobId, merchantId: work.merchantId, playerIds: slice, filter: work.filter };
    if (await stopBeforeNextStatement()) {
      return { players: players.length, cancelled: cursor.cancelled + sliceCancelled };
    }
    // Usually the whole slice is one statement (it was sized to fit one batch); a slice whose players
    // hold more rewards than that is cancelled in batches of at most CANCEL_BATCH_SIZE instead.
    const whole = await inSpan('cancel batch', { attributes: { 'batch.identifiers': slice.length } }, async (span) => {
      const applied = await cancelSliceOfPlayers(deps.db, { ...query, limit: batchSize });
      span.setAttributes({ 'batch.cancelled': applied.cancelled, 'batch.applied': applied.applied });
      return applied;
    });
    if (whole.applied) {
      sliceCancelled += whole.cancelled;
      observeBatch(deps, whole.cancelled, whole.cancelled);
    }
    while (!whole.applied) {
      if (await stopBeforeNextStatement()) {
        return { players: players.length, cancelled: cursor.cancelled + sliceCancelled };
      }
      const result = await inSpan('cancel batch', { attributes: { 'batch.limit': batchSize } }, async (span) => {
        const counts = await deps.db
          .transaction()
          .execute((trx) => cancelRewardsOfPlayers(trx, { ...query, limit: batchSize }));
        span.setAttribute('batch.cancelled', counts.cancelled);
        return counts;
      });
      sliceCancelled += result.cancelled;
      observeBatch(deps, result.picked, result.cancelled);
      if (result.picked < batchSize) break;
    }

    const playersDone = cursor.playerIndex + slice.length;
    // Sized by the rewards the slices held in any state: the bound the one-statement path checks.
    const picked = cursor.picked + whole.rewards;
    const rewardsPerPlayer = picked / playersDone;
    cursor = {
      playerIndex: playersDone,
      sliceSize: sliceFor(batchSize, rewardsPerPlayer, players.length - playersDone),
      cancelled: cursor.cancelled + sliceCancelled,
      picked,
    };
    await Promise.all([
      job.updateData({ ...job.data, cursor }),
      job.updateProgress(Math.floor((playersDone / players.length) * 100)),
    ]);
  }
  return { players: players.length, cancelled: cursor.cancelled };
}

function observeBatch(deps: WorkerDeps, rewards: number, cancelled: number): void {
  deps.metrics.batchSize.observe({ operation: 'bulkCancelByQuery' }, rewards);
  if (cancelled > 0) deps.metrics.rewardsCancelled.inc({ operation: 'bulkCancelByQuery' }, cancelled);
}
