import { RssSampler } from '../lib/memory-sampler.js';
import type { RunningService } from '../lib/processes.js';
import { sleep } from '../lib/progress.js';
import type { SeededMerchant } from '../lib/seed.js';
import { type BenchContext, type BenchData, seeded } from './context.js';
import type { Measurements } from './measurements.js';

/** What every entry of the phase table works with: the run, its data, the figures so far, and helpers. */
export interface PhaseKit {
  context: BenchContext;
  data: BenchData;
  measured: Measurements;
  /** The main merchant (bulkCancelByQuery, readAll, /betSlip): seeded whenever a phase that needs it runs. */
  main(): SeededMerchant;
  startApi(name: string): Promise<RunningService>;
  startWorker(name: string, extraEnv?: Record<string, string>): Promise<RunningService>;
  /** The worker's median RSS while it has nothing to do. */
  idleRss(worker: RunningService): Promise<number | null>;
}

export function phaseKit(context: BenchContext, data: BenchData, measured: Measurements): PhaseKit {
  const { services, environment, settings } = context;
  return {
    context,
    data,
    measured,
    main: () => seeded(data.main, 'main'),
    startApi: (name) => services.start('api', name, environment),
    startWorker: (name, extraEnv = {}) => services.start('worker', name, environment, extraEnv),
    idleRss: async (worker) => {
      const sampler = new RssSampler(worker.pid).start();
      await sleep(settings.idleMemoryMs);
      return (await sampler.stop()).medianMiB;
    },
  };
}
