import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BenchResults } from '../figures/bench-results.js';
import { httpTables } from './http-tables.js';
import { rawUpdateTail } from './targets.js';
import { bytes, count, ms, table, times } from './text-table.js';

/** The human-readable result: figures, then every target with pass/fail. */
export function formatReport(results: BenchResults): string {
  const bulk = results.bulkCancelByQuery;
  const singles = results.singleCancels;
  const http = results.http;
  const memory = results.workerMemory;
  const lines: string[] = [];
  lines.push(
    `Benchmark ${results.quick ? '(--quick: a tenth of the sizes; timing not judged)' : '(full)'} at ${results.at}, ` +
      `${results.durationSeconds} s`,
  );
  if (results.only !== null) lines.push(`Only the phase groups ${results.only.join(', ')} (--only); the others: n/a`);
  if (Object.keys(results.serviceEnv).length > 0) {
    lines.push(`Services configured with --env ${JSON.stringify(results.serviceEnv)}`);
  }
  const m = results.machine;
  lines.push(
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node}, PostgreSQL ${m.postgres}, ` +
      `Redis ${m.redis}; load average at start ${m.loadAverageAtStart.join(' / ')}`,
  );
  lines.push('');
  const figures: Array<[string, string]> = [
    [
      `bulkCancelByQuery, ${count(bulk.rewards)} rewards, 1 worker (median of ${bulk.runs})`,
      `${ms(bulk.serviceMs)} (${bulk.serviceRunsMs.map(ms).join(', ')})`,
    ],
    ['  2 workers, taking turns with those (median)', ms(bulk.twoWorkersMs)],
    [
      '  1 / 2 workers, one bulk job at a time each (WORKER_BULK_CONCURRENCY=1)',
      `${ms(bulk.scaleOutAtConcurrencyOne.oneWorkerMs)} / ${ms(bulk.scaleOutAtConcurrencyOne.twoWorkersMs)}`,
    ],
    [
      `  raw single UPDATE of the same rows (median of ${bulk.runs})`,
      `${ms(bulk.rawUpdateMs)} (${bulk.rawUpdateRunsMs.map(ms).join(', ')})`,
    ],
    ['  ratio service / raw UPDATE', times(bulk.ratio)],
    ['  raw UPDATE also recording the job id (same write as the service)', ms(bulk.rawUpdateWithJobIdMs)],
    ['  ratio service / that UPDATE', times(bulk.ratioToSameWrite)],
    ['  the 1-worker run sampled for transactions and memory', ms(bulk.sampledRunMs)],
    ['  longest worker transaction', ms(bulk.longestTransactionMs)],
    ['  readAll p99 idle / during', `${ms(bulk.readAllP99IdleMs)} / ${ms(bulk.readAllP99DuringMs)}`],
    ['  readAll p99 during the raw UPDATE alone (no worker)', rawUpdateTail(results)],
    [
      `single cancels, ${count(singles.requests)}, coalesced (median of ${singles.runs})`,
      `${ms(singles.coalescedMs)} (${singles.coalescedRunsMs.map(ms).join(', ')})`,
    ],
    [
      `  one UPDATE per job (median of ${singles.runs})`,
      `${ms(singles.oneUpdatePerJobMs)} (${singles.oneUpdatePerJobRunsMs.map(ms).join(', ')})`,
    ],
    ['  speedup', times(singles.speedup)],
    [
      '  raw baseline accepting as many requests (POST /raw/cancel, alone): time / speedup it allows',
      `${ms(singles.rawAcceptBound.ms)} / ${times(singles.rawAcceptBound.speedup)}`,
    ],
    [
      '  workers alone (jobs stored first): coalesced / one per job',
      `${ms(singles.workersAlone.coalescedMs)} / ${ms(singles.workersAlone.oneUpdatePerJobMs)}, ` +
        `${times(singles.workersAlone.speedup)}`,
    ],
  ];
  figures.push([
    'worker RSS idle / small run / large run',
    `${memory.idleMiB ?? 'n/a'} / ${memory.peak100kMiB ?? 'n/a'} / ${memory.peak1MMiB ?? 'n/a'} MiB ` +
      `(${count(memory.smallRewards)} and ${count(memory.largeRewards)} rewards)`,
  ]);
  const redis = results.redisMemory.run;
  if (redis) {
    figures.push([
      `Redis used_memory, ${count(redis.requests)} bulkCancel of ${count(redis.idsPerRequest)} ids: before / peak / after`,
      `${redis.beforeMiB} / ${redis.peakMiB} / ${redis.afterMiB} MiB (Δ ${redis.deltaMiB} MiB; server peak ` +
        `${redis.serverPeakMiB} MiB; all completed after ${ms(redis.completedMs)}; ${redis.retries} sent again after a 503)`,
    ]);
  }
  const { single, bulk: bulkBytes } = results.bookkeeping;
  figures.push([
    'bookkeeping per single cancel (webhook_deliveries apart)',
    `${bytes(single?.bytesPerCancel ?? null)} (webhooks ${bytes(single?.webhookBytesPerCancel ?? null)})`,
  ]);
  figures.push([
    'bookkeeping per bulkCancelByQuery reward: as written / listed (webhook_deliveries apart)',
    `${bytes(bulkBytes?.writtenBytesPerReward ?? null)} / ${bytes(bulkBytes?.listedBytesPerReward ?? null)} ` +
      `(webhooks ${bytes(bulkBytes?.webhookBytesPerReward ?? null)})`,
  ]);
  const fair = results.fairTurns;
  if (fair) {
    figures.push([
      `fair turns: B's ${fair.bIds}-id bulkCancel behind A's ${fair.jobs} × ${count(fair.playersPerJob)} players`,
      `${ms(fair.bLatencyMs)} (${fair.aJobsFinishedBeforeB} of A's jobs finished before it); ` +
        `A's ${fair.jobs} jobs ${ms(fair.aJobsMs)}`,
    ]);
  }
  lines.push(...table(['figure', 'value'], figures));
  lines.push('');
  if (http) {
    lines.push(...httpTables(http));
    lines.push('');
  }
  lines.push(
    ...table(
      ['target', 'wanted', 'measured', 'result'],
      results.targets.map((row) => [
        row.what,
        row.target,
        row.measured,
        // A quick run is too small to judge timing (e.g. 1,000 players are not split across workers).
        row.pass === null ? 'n/a' : results.quick ? (row.pass ? '(pass)' : '(fail)') : row.pass ? 'PASS' : 'FAIL',
      ]),
    ),
  );
  const failed = results.checks.filter((check) => !check.ok);
  lines.push('');
  lines.push(
    failed.length === 0 && results.errors.length === 0
      ? `Correctness: all ${results.checks.length} checks passed.`
      : `Correctness: ${failed.length} of ${results.checks.length} checks FAILED, ${results.errors.length} phase errors.`,
  );
  for (const check of failed) lines.push(`  FAILED ${check.name}: ${check.detail}`);
  for (const error of results.errors) lines.push(`  ERROR in ${error.phase}: ${error.message}`);
  return lines.join('\n');
}

/** bench/results/latest.json: the whole run's figures. */
export function writeResults(path: string, results: BenchResults): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}
