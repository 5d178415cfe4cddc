import { BULK_CANCEL_BY_QUERY_PATH } from '../lib/api-paths.js';
import { type FinishedJob, waitForJobs } from '../lib/job-waiter.js';
import { MerchantClient } from '../lib/merchant-client.js';
import { sleep } from '../lib/progress.js';
import { ReadAllStreams, type StreamRecord, sentBetween, summarise } from '../lib/read-all-stream.js';
import { sampledBulkCancel } from './bulk-cancel.phase.js';
import { measureRawUpdate, playersOf } from './bulk-cancel-runs.js';
import type { PhaseKit } from './phase-kit.js';
import { phase, step, type TableEntry } from './runner.js';

/**
 * The readAll p99 during a bulkCancelByQuery. The stream costs CPU the timed runs must not lose, so it
 * gets runs of its own. One cancel lasts too short for a p99 of its own (its answers' "p99" would be
 * their slowest one, against the idle stream's 4th slowest of its `idleMs` window), so the cancel runs
 * `cancelRuns` times (each on a fresh copy) and the answers during them are pooled, for a p99 over about
 * as many answers as the idle one. The stream is sent by a process of its own, opened for all the runs.
 *
 * Then the same stream while the raw UPDATE baseline runs instead (as many runs, no worker, the API
 * otherwise idle): the tail the database's work alone gives readAll on this machine, whatever the
 * service does. It is printed beside the target for context and does not judge it.
 */
export function readAllStreamPhases(kit: PhaseKit): TableEntry[] {
  const { context, measured, main, startApi, startWorker } = kit;
  const { settings, progress, checks } = context;
  const { connections, requestsPerSecond, warmupMs, idleMs, cancelRuns } = settings.readAllStream;
  const bulkRewards = settings.bulk.players * settings.bulk.rewardsPerPlayer;
  const { streams } = measured;
  const duringRecords: StreamRecord[] = [];
  const duringRawRecords: StreamRecord[] = [];
  let readAllClient: ReadAllStreams | null = null;
  const openStreams = () => {
    if (!readAllClient) throw new Error('the readAll stream process is not open');
    return readAllClient;
  };
  const streamTo = (baseUrl: string) =>
    openStreams().start({ baseUrl, merchant: main(), connections, requestsPerSecond });
  /**
   * Runs `work` with a stream open around it and keeps the answers to requests sent within the window
   * `work` ran in (`windowOf` its result): the stream opens before, and closes after, the bench's own
   * queries over the same million rows (counting the rewards to cancel, checking them).
   */
  async function streamedDuring<T>(
    baseUrl: string,
    work: () => Promise<T>,
    windowOf: (result: T) => { ranFrom: number; ranTo: number },
  ): Promise<{ result: T; during: StreamRecord }> {
    const stream = await streamTo(baseUrl);
    let result: T;
    let record: StreamRecord;
    try {
      result = await work();
    } finally {
      record = await stream.stop();
    }
    const { ranFrom, ranTo } = windowOf(result);
    return { result, during: sentBetween(record, ranFrom, ranTo) };
  }

  const runs = Array.from({ length: cancelRuns }, (_, runIndex) => {
    const label = `${runIndex + 1} of ${cancelRuns}`;
    return phase(
      'bulk',
      `bulkCancelByQuery, ${bulkRewards} rewards, 1 worker, with a readAll stream (${label})`,
      async (db) => {
        const api = await startApi(`api-bulk-read-load-${runIndex + 1}`);
        const worker = await startWorker(`worker-bulk-read-load-${runIndex + 1}`);
        const client = new MerchantClient(api.baseUrl, main());
        const players = await playersOf(db, main().id);
        const warmup = await streamTo(api.baseUrl);
        await Promise.all([sleep(warmupMs), warmUpBulkCancel(kit, client, players, label)]);
        await warmup.stop();
        if (runIndex === 0) {
          progress.step(`readAll stream (${connections} in flight, ${requestsPerSecond}/s), idle`);
          const idleStream = await streamTo(api.baseUrl);
          await sleep(idleMs);
          streams.idle = summarise([await idleStream.stop()]);
        }

        progress.step(`readAll stream during a bulkCancelByQuery of ${players.length} players, 1 worker (${label})`);
        const { result: sampled, during } = await streamedDuring(
          api.baseUrl,
          () => sampledBulkCancel(kit, db, worker, client, players, `1 worker, readAll stream (${label})`),
          (result) => result.run,
        );
        duringRecords.push(during);
        if (runIndex === 0 || !sampled.run.valid) measured.underReadLoad = sampled.run;
        const longest = measured.longestTransactionUnderReadLoad;
        if (!longest || (sampled.transactionSampling.longestMs ?? 0) > (longest.longestMs ?? 0)) {
          measured.longestTransactionUnderReadLoad = sampled.transactionSampling;
        }
        const thisRun = summarise([during]);
        progress.step(
          `with readAll stream (${label}): ${sampled.run.serviceMs} ms; ${thisRun.requests} readAll answers, ` +
            `p50 ${thisRun.p50Ms} ms, slowest ${thisRun.maxMs} ms; longest transaction ${sampled.transactionSampling.longestMs} ms`,
        );
      },
    );
  });

  const rawRuns = Array.from({ length: cancelRuns }, (_, runIndex) => {
    const label = `${runIndex + 1} of ${cancelRuns}`;
    return phase('bulk', `raw UPDATE of ${bulkRewards} rewards, with a readAll stream (${label})`, async (db) => {
      const api = await startApi(`api-raw-update-read-load-${runIndex + 1}`);
      const players = await playersOf(db, main().id);
      const warmup = await streamTo(api.baseUrl);
      await sleep(warmupMs);
      await warmup.stop();
      progress.step(`readAll stream during the raw UPDATE of ${players.length} players (${label})`);
      const { result: raw, during } = await streamedDuring(
        api.baseUrl,
        () => measureRawUpdate(db, main().id, players, null, checks),
        (result) => result,
      );
      duringRawRecords.push(during);
      const thisRun = summarise([during]);
      progress.step(
        `raw UPDATE with readAll stream (${label}): ${raw.rawUpdateMs} ms; ${thisRun.requests} readAll answers, ` +
          `p50 ${thisRun.p50Ms} ms, slowest ${thisRun.maxMs} ms`,
      );
    });
  });

  const open = step('bulk', async () => {
    readAllClient = ReadAllStreams.open();
  });
  const closeAndPool = step('bulk', async () => {
    await readAllClient?.close();
    if (duringRecords.length === 0) return;
    streams.during = summarise(duringRecords);
    streams.duringRuns = duringRecords.length;
    if (duringRawRecords.length > 0) {
      streams.duringRawUpdate = summarise(duringRawRecords);
      streams.duringRawUpdateRuns = duringRawRecords.length;
    }
    for (const [name, summary] of [
      ['idle', streams.idle],
      ['during', streams.during],
      ['during the raw UPDATE', streams.duringRawUpdate ?? null],
    ] as const) {
      if (!summary) continue;
      checks.expect(
        `readAll stream ${name}: no errors`,
        summary.errors === 0,
        `${summary.requests} requests, ${summary.errors} errors${summary.firstError ? `: ${summary.firstError}` : ''}`,
      );
    }
    progress.step(
      `readAll p99 ${streams.idle?.p99Ms} ms idle (${streams.idle?.requests} answers), ` +
        `${streams.during.p99Ms} ms during ${duringRecords.length} cancels (${streams.during.requests} answers), ` +
        `${streams.duringRawUpdate?.p99Ms ?? 'n/a'} ms during ${duringRawRecords.length} raw UPDATEs ` +
        `(${streams.duringRawUpdate?.requests ?? 'n/a'} answers)`,
    );
  });
  return [open, ...runs, ...rawRuns, closeAndPool];
}

/**
 * The API and worker of each run are new processes: their first bulk cancel runs cold code (V8 has not
 * yet optimised the validation of the player ids), which a production process met long ago. One cancel
 * of as many players that have no rewards, while the stream warms up, takes both through the same route
 * and job first; it changes no reward.
 */
async function warmUpBulkCancel(
  { context }: PhaseKit,
  client: MerchantClient,
  players: readonly string[],
  label: string,
): Promise<void> {
  const { settings, checks } = context;
  const jobId = await client.enqueue(BULK_CANCEL_BY_QUERY_PATH, {
    playerIds: players.map((player) => `${player}-warm-up`),
  });
  const finished = await waitForJobs(client, [jobId], {
    pollIntervalMs: settings.pollIntervalMs,
    timeoutMs: settings.runTimeoutMs,
    label: 'warm-up bulk cancel',
  });
  const { status } = finished.get(jobId) as FinishedJob;
  checks.expect(
    `warm-up bulk cancel (${label}): completed, nothing cancelled`,
    status.state === 'completed' && status.result?.cancelled === 0,
    `${status.state}, ${status.result?.cancelled} cancelled`,
  );
}
