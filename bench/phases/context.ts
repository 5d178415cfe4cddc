import type { Checks } from '../lib/checks.js';
import type { BenchDatabases } from '../lib/database.js';
import type { ServiceEnvironment, ServiceGroup } from '../lib/processes.js';
import type { Progress } from '../lib/progress.js';
import type { QueueKeys } from '../lib/queue-keys.js';
import type { SeededMerchant } from '../lib/seed.js';
import type { BenchSettings } from '../lib/settings.js';

/** What every phase works with; built once by run.ts. */
export interface BenchContext {
  settings: BenchSettings;
  progress: Progress;
  services: ServiceGroup;
  databases: BenchDatabases;
  queue: QueueKeys;
  /** How the services reach the live database and the run's queue prefix. */
  environment: ServiceEnvironment;
  checks: Checks;
  /** True once the run is being torn down (Ctrl-C): no phase may start anything new. */
  interrupted(): boolean;
}

/**
 * The merchants the seed made, one per purpose, so that no run disturbs another's rows. With `--only`
 * a merchant no selected phase needs is not seeded (null).
 */
export interface BenchData {
  /** bulkCancelByQuery (players × rewards), readAll (configurations × games) and /betSlip (items). */
  main: SeededMerchant | null;
  /** The smaller bulk cancel of the worker-memory comparison. */
  memory: SeededMerchant | null;
  /** Single cancels, coalesced. */
  singles: SeededMerchant | null;
  /** Single cancels, one UPDATE per job (the baseline). */
  singlesBaseline: SeededMerchant | null;
  /**
   * Merchants with one configuration and no rewards: the Redis-memory phase's (whose ids are never
   * found) and the two of fair turns (their rewards are inserted by that phase, into its own copy).
   */
  redisMemory: SeededMerchant | null;
  tenantA: SeededMerchant | null;
  tenantB: SeededMerchant | null;
}

/** The merchant a selected phase needs: seeded whenever that phase runs. */
export function seeded(merchant: SeededMerchant | null, what: string): SeededMerchant {
  if (!merchant) throw new Error(`the ${what} merchant was not seeded`);
  return merchant;
}
