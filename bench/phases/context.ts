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

/** The merchants the seed made, one per purpose, so that no run disturbs another's rows. */
export interface BenchData {
  /** bulkCancelByQuery (players × rewards), readAll (configurations × games) and /betSlip (items). */
  main: SeededMerchant;
  /** The smaller bulk cancel of the worker-memory comparison. */
  memory: SeededMerchant;
  /** Single cancels, coalesced. */
  singles: SeededMerchant;
  /** Single cancels, one UPDATE per job (the baseline). */
  singlesBaseline: SeededMerchant;
}
