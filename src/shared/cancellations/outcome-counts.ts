import type { CancelOutcome } from '../db/schema.js';
import type { CancelResult } from '../jobs/job-catalogue.js';

/**
 * A single cancel's counts from the one outcome of its one reward: what the worker reports as the job's
 * result, and how the job's audit row (which keeps the outcome alone, migration 2026-11-24T0100) is read back.
 */
export function outcomeCounts(outcome: CancelOutcome): CancelResult {
  return {
    requested: 1,
    cancelled: outcome === 'cancelled' ? 1 : 0,
    alreadyCancelled: outcome === 'alreadyCancelled' ? 1 : 0,
    notCancellable: outcome === 'notCancellable' ? 1 : 0,
    notFound: outcome === 'notFound' ? 1 : 0,
  };
}
