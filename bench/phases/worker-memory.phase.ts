import type { BulkCancelRun } from '../figures/bulk-cancel.js';
import { RssSampler } from '../lib/memory-sampler.js';
import { MerchantClient } from '../lib/merchant-client.js';
import { measureServiceBulkCancel, playersOf } from './bulk-cancel-runs.js';
import { seeded } from './context.js';
import type { PhaseKit } from './phase-kit.js';
import { type Phase, phase } from './runner.js';

/**
 * The worker's RSS during a smaller bulk cancel, beside the large one's (sampled by the first 1-worker
 * bulk phase): what the worker holds should not grow with the size of the cancel.
 */
export function workerMemoryPhase({ context, data, measured, startApi, startWorker, idleRss }: PhaseKit): Phase {
  const { settings, progress, checks } = context;
  const { pollIntervalMs, runTimeoutMs: timeoutMs } = settings;
  const smallRewards = settings.memorySmall.players * settings.memorySmall.rewardsPerPlayer;
  const merchant = () => seeded(data.memory, 'worker memory');
  return phase('worker-memory', `worker memory, ${smallRewards} rewards`, async (db) => {
    const { memory } = measured;
    const api = await startApi('api-memory-small');
    const worker = await startWorker('worker-memory-small');
    const client = new MerchantClient(api.baseUrl, merchant());
    const players = await playersOf(db, merchant().id);
    memory.idleBeforeSmallMiB = await idleRss(worker);
    const rss = new RssSampler(worker.pid).start();
    let run: BulkCancelRun | null = null;
    try {
      run = await measureServiceBulkCancel(
        db,
        client,
        players,
        { pollIntervalMs, timeoutMs, label: 'memory, small run' },
        checks,
      );
    } finally {
      memory.peak100kMiB = (await rss.stop()).peakMiB;
    }
    memory.smallRewards = run.rewards;
    progress.step(
      `small run: ${run.serviceMs} ms, worker RSS idle ${memory.idleBeforeSmallMiB} MiB, peak ${memory.peak100kMiB} MiB`,
    );
  });
}
