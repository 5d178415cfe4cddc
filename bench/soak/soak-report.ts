import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { round } from '../lib/percentiles.js';
import { table } from '../report/text-table.js';
import type { Figure, SoakResults } from './soak-figures.js';
import type { SoakSampler } from './soak-sampler.js';
import { MIN_MINUTES_FOR_FIGURES } from './soak-settings.js';
import { kindFigures, latenciesBetween, latencyFigures } from './soak-summary.js';
import { REQUEST_KINDS, type TrafficMix } from './traffic-mix.js';

/**
 * The steady-state figures, each judged on this run. A figure this run cannot measure (too
 * short) is `null`, never a pass.
 */
export function evaluateFigures(results: Omit<SoakResults, 'figures'>): Figure[] {
  const long = results.minutes >= MIN_MINUTES_FOR_FIGURES;
  const rate = (value: number | null, limit: number, unit: string): Pick<Figure, 'value' | 'holds'> => ({
    value: value === null ? 'n/a' : `${value} ${unit}`,
    holds: !long || value === null ? null : value <= limit,
  });
  const { growth, singleCancelP99, webhooks, deadReceiver } = results;
  const fiveXx = REQUEST_KINDS.reduce((sum, kind) => sum + results.requests[kind].fiveXx, 0);
  const noAnswer = REQUEST_KINDS.reduce((sum, kind) => sum + results.requests[kind].noAnswer, 0);
  const acceptedPerMinute = deadReceiver.acceptedJobs / results.minutes;
  const rewardsCheck = results.checks.find((check) => check.name.startsWith('every reward answered 200'));
  return [
    {
      name: "own tables' growth, last third",
      target: '≤ 0.5 MiB/min',
      ...rate(growth.ownTablesMiBPerMin, 0.5, 'MiB/min'),
    },
    {
      name: 'Redis used_memory growth, last third',
      target: '≤ 1 MiB/min',
      ...rate(growth.redisMiBPerMin, 1, 'MiB/min'),
    },
    { name: 'API RSS growth, last third', target: '≤ 2 MiB/min', ...rate(growth.apiRssMiBPerMin, 2, 'MiB/min') },
    { name: 'worker RSS growth, last third', target: '≤ 2 MiB/min', ...rate(growth.workerRssMiBPerMin, 2, 'MiB/min') },
    {
      name: 'single-cancel p99, last third vs minute two',
      target: '≤ 2×',
      value:
        singleCancelP99.ratio === null
          ? 'n/a'
          : `${singleCancelP99.lastThirdMs} ms vs ${singleCancelP99.minuteTwoMs} ms = ${singleCancelP99.ratio}×`,
      holds: !long || singleCancelP99.ratio === null ? null : singleCancelP99.ratio <= 2,
    },
    {
      name: 'no 5xx',
      target: '0 (and every request answered)',
      value: `${fiveXx} 5xx, ${noAnswer} unanswered`,
      holds: fiveXx === 0 && noAnswer === 0,
    },
    {
      name: 'every reward answered 200 ends CANCELLED',
      target: 'all',
      value: rewardsCheck?.detail ?? 'not checked',
      holds: rewardsCheck ? rewardsCheck.ok : null,
    },
    {
      name: "dead receiver's merchant: pending deliveries bounded",
      // Bounded = levelled off: over the last third they grow by at most 5 % of the rate its jobs arrive.
      target: `levelled off (≤ 5 % of its ${round(acceptedPerMinute, 0)} jobs/min)`,
      value:
        deadReceiver.pendingPerMinuteLastThird === null
          ? 'n/a'
          : `${deadReceiver.pendingDeliveriesAtEnd} pending at the end, +${deadReceiver.pendingPerMinuteLastThird}/min over the last third`,
      holds:
        !long || deadReceiver.pendingPerMinuteLastThird === null
          ? null
          : deadReceiver.pendingPerMinuteLastThird <= 0.05 * acceptedPerMinute,
    },
    {
      name: "others' webhooks arrive within 10 s",
      target: 'all, ≤ 10 s after the job finished',
      value: `${webhooks.received} of ${webhooks.expected}, p99 ${webhooks.p99DelayMs ?? 'n/a'} ms, max ${webhooks.maxDelayMs ?? 'n/a'} ms`,
      holds: webhooks.expected === 0 ? null : webhooks.received >= webhooks.expected && webhooks.over10s === 0,
    },
  ];
}

export function writeSoakResults(path: string, results: SoakResults): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}

const fmt = (value: number | null | undefined, unit = '') => (value == null ? 'n/a' : `${value}${unit}`);

export function formatSoakReport(results: SoakResults): string {
  const lines: string[] = [];
  lines.push(
    `Soak of ${results.minutes} min (${results.at}), ${results.machine.cpus} CPUs, load at start ` +
      `${results.machine.loadAverageAtStart.join(' ')}`,
  );
  for (const note of results.notes) lines.push(`note: ${note}`);
  lines.push('');
  lines.push(
    ...table(
      ['requests', 'answered', 'p50 / p99 ms', '5xx', 'no answer', 'not sent', 'statuses'],
      REQUEST_KINDS.map((kind) => {
        const figures = results.requests[kind];
        return [
          kind,
          String(figures.count),
          `${fmt(figures.p50Ms)} / ${fmt(figures.p99Ms)}`,
          String(figures.fiveXx),
          String(figures.noAnswer),
          String(figures.notSent),
          JSON.stringify(figures.statuses),
        ];
      }),
    ),
  );
  lines.push('');
  lines.push(
    ...table(
      ['minute', 'cancel n', 'cancel p50 / p99 ms', 'readAll n', 'readAll p50 / p99 ms'],
      results.perMinute.map((row) => [
        String(row.minute),
        String(row.singleCancel.count),
        `${fmt(row.singleCancel.p50Ms)} / ${fmt(row.singleCancel.p99Ms)}`,
        String(row.readAll.count),
        `${fmt(row.readAll.p50Ms)} / ${fmt(row.readAll.p99Ms)}`,
      ]),
    ),
  );
  lines.push('');
  const first = results.samples.find((sample) => sample.atS >= 0) ?? results.samples[0];
  const last = results.samples.at(-1);
  const { growth } = results;
  lines.push(
    ...table(
      ['sampled', 'at start', 'at end', `growth ${growth.fromS}–${growth.toS} s`],
      [
        [
          'own tables MiB',
          fmt(first?.ownTablesMiB),
          fmt(last?.ownTablesMiB),
          fmt(growth.ownTablesMiBPerMin, ' MiB/min'),
        ],
        ...Object.keys(first?.tablesMiB ?? {}).map((name) => [
          `  ${name} MiB`,
          fmt(first?.tablesMiB[name]),
          fmt(last?.tablesMiB[name]),
          fmt(growth.tablesMiBPerMin[name], ' MiB/min'),
        ]),
        [
          'Redis used_memory MiB',
          fmt(first?.redisUsedMiB),
          fmt(last?.redisUsedMiB),
          fmt(growth.redisMiBPerMin, ' MiB/min'),
        ],
        [
          'Redis keys under the prefix',
          fmt(first?.redisKeys),
          fmt(last?.redisKeys),
          fmt(growth.redisKeysPerMin, '/min'),
        ],
        ['API RSS MiB', fmt(first?.apiRssMiB), fmt(last?.apiRssMiB), fmt(growth.apiRssMiBPerMin, ' MiB/min')],
        [
          'worker RSS MiB',
          fmt(first?.workerRssMiB),
          fmt(last?.workerRssMiB),
          fmt(growth.workerRssMiBPerMin, ' MiB/min'),
        ],
        [
          'dead merchant pending deliveries',
          fmt(first?.deadPendingDeliveries),
          fmt(last?.deadPendingDeliveries),
          fmt(results.deadReceiver.pendingPerMinuteLastThird, '/min'),
        ],
      ],
    ),
  );
  lines.push(
    `own-table bytes per reward accepted for cancelling (whole run): ${fmt(results.ownBytesPerAcceptedReward)}; ` +
      `rewards accepted: ${results.acceptedRewards}`,
  );
  lines.push('');
  lines.push(
    ...table(
      ['steady-state figure', 'target', 'this run', 'holds'],
      results.figures.map((figure) => [
        figure.name,
        figure.target,
        figure.value,
        figure.holds === null ? 'n/a' : figure.holds ? 'HOLDS' : 'DOES NOT HOLD',
      ]),
    ),
  );
  lines.push('');
  for (const check of results.checks) lines.push(`${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}`);
  return lines.join('\n');
}

/** One progress line per minute of traffic: latencies so far and the last sample's sizes. */
export function minuteLine(minute: number, traffic: TrafficMix, sampler: SoakSampler): string {
  const from = (minute - 1) * 60;
  const cancels = latencyFigures(latenciesBetween(traffic.records.singleCancel, from, minute * 60));
  const reads = latencyFigures(latenciesBetween(traffic.records.readAll, from, minute * 60));
  const fiveXx = REQUEST_KINDS.reduce((sum, kind) => sum + kindFigures(traffic.records[kind]).fiveXx, 0);
  const sample = sampler.samples.at(-1);
  return (
    `minute ${minute}: cancel p50/p99 ${cancels.p50Ms}/${cancels.p99Ms} ms (${cancels.count}), readAll ` +
    `${reads.p50Ms}/${reads.p99Ms} ms, 5xx so far ${fiveXx}; own tables ${sample?.ownTablesMiB ?? '?'} MiB, ` +
    `Redis ${sample?.redisUsedMiB ?? '?'} MiB (${sample?.redisKeys ?? '?'} keys), RSS api ${sample?.apiRssMiB ?? '?'} / ` +
    `worker ${sample?.workerRssMiB ?? '?'} MiB, dead merchant pending ${sample?.deadPendingDeliveries ?? '?'}`
  );
}
