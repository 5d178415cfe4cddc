import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Check } from '../lib/checks.js';
import type { MachineInfo } from '../lib/machine.js';
import { percentile, round } from '../lib/percentiles.js';
import { table } from '../report/text-table.js';
import type { SoakSample } from './soak-sampler.js';
import type { SoakSettings } from './soak-settings.js';
import { type KindRecord, REQUEST_KINDS, type RequestKind } from './traffic-mix.js';

/** Growth figures need this much traffic: a third of it must hold enough 10 s samples for a slope. */
export const MIN_MINUTES_FOR_FIGURES = 3;

export interface LatencyFigures {
  count: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface KindFigures extends LatencyFigures {
  statuses: Record<string, number>;
  fiveXx: number;
  noAnswer: number;
  notSent: number;
}

interface WebhookFigures {
  /** Jobs of the healthy merchants answered 200: each should bring one event. */
  expected: number;
  received: number;
  p50DelayMs: number | null;
  p99DelayMs: number | null;
  maxDelayMs: number | null;
  over10s: number;
}

interface DeadReceiverFigures {
  merchantId: string;
  acceptedJobs: number;
  /** Attempts its receiver answered 500. */
  refusedAttempts: number;
  pendingDeliveriesAtEnd: number | null;
  webhookQueueAtEnd: SoakSample['webhookQueue'];
  /** Pending deliveries gained per minute over the last third. */
  pendingPerMinuteLastThird: number | null;
}

/** Least-squares slopes over the last third of the traffic, per minute. */
export interface GrowthFigures {
  fromS: number;
  toS: number;
  samples: number;
  ownTablesMiBPerMin: number | null;
  rewardsMiBPerMin: number | null;
  tablesMiBPerMin: Record<string, number | null>;
  redisMiBPerMin: number | null;
  redisKeysPerMin: number | null;
  apiRssMiBPerMin: number | null;
  workerRssMiBPerMin: number | null;
}

export interface Figure {
  name: string;
  target: string;
  value: string;
  /** null: not measurable in this run (too short, or nothing to measure). */
  holds: boolean | null;
}

export interface SoakResults {
  at: string;
  minutes: number;
  durationSeconds: number;
  machine: MachineInfo;
  settings: SoakSettings;
  notes: string[];
  requests: Record<RequestKind, KindFigures>;
  perMinute: { minute: number; singleCancel: LatencyFigures; readAll: LatencyFigures }[];
  singleCancelP99: { minuteTwoMs: number | null; lastThirdMs: number | null; ratio: number | null };
  acceptedRewards: number;
  growth: GrowthFigures;
  /** Own tables' growth over the whole traffic divided by the rewards accepted for cancelling. */
  ownBytesPerAcceptedReward: number | null;
  webhooks: WebhookFigures;
  deadReceiver: DeadReceiverFigures;
  samples: SoakSample[];
  checks: Check[];
  figures: Figure[];
}

export function latencyFigures(samples: readonly number[]): LatencyFigures {
  const p50 = percentile(samples, 50);
  const p99 = percentile(samples, 99);
  return {
    count: samples.length,
    p50Ms: p50 === null ? null : round(p50, 1),
    p99Ms: p99 === null ? null : round(p99, 1),
  };
}

export function kindFigures(record: KindRecord): KindFigures {
  const count = (test: (status: string) => boolean) =>
    Object.entries(record.statuses).reduce((sum, [status, n]) => sum + (test(status) ? n : 0), 0);
  return {
    ...latencyFigures(record.latencyMs),
    statuses: record.statuses,
    fiveXx: count((status) => status.startsWith('5')),
    noAnswer: count((status) => status === 'error'),
    notSent: record.notSent,
  };
}

/** Latencies of answers to requests sent in [fromS, toS). */
export function latenciesBetween(record: KindRecord, fromS: number, toS: number): number[] {
  const picked: number[] = [];
  record.sentAtS.forEach((sentAt, index) => {
    if (sentAt >= fromS && sentAt < toS) picked.push(record.latencyMs[index] as number);
  });
  return picked;
}

export function perMinute(records: Record<RequestKind, KindRecord>, minutes: number): SoakResults['perMinute'] {
  return Array.from({ length: minutes }, (_, minute) => ({
    minute: minute + 1,
    singleCancel: latencyFigures(latenciesBetween(records.singleCancel, minute * 60, (minute + 1) * 60)),
    readAll: latencyFigures(latenciesBetween(records.readAll, minute * 60, (minute + 1) * 60)),
  }));
}

/** Least-squares slope of value over time (per minute); null with fewer than 3 points. */
export function slopePerMinute(points: ReadonlyArray<{ atS: number; value: number | null }>): number | null {
  const usable = points.filter((point): point is { atS: number; value: number } => point.value !== null);
  if (usable.length < 3) return null;
  const meanT = usable.reduce((sum, point) => sum + point.atS, 0) / usable.length;
  const meanV = usable.reduce((sum, point) => sum + point.value, 0) / usable.length;
  let numerator = 0;
  let denominator = 0;
  for (const point of usable) {
    numerator += (point.atS - meanT) * (point.value - meanV);
    denominator += (point.atS - meanT) ** 2;
  }
  return denominator === 0 ? null : round((numerator / denominator) * 60, 3);
}

export function growthOverLastThird(samples: readonly SoakSample[], trafficS: number): GrowthFigures {
  const fromS = round((trafficS * 2) / 3, 1);
  const window = samples.filter((sample) => sample.atS >= fromS && sample.atS <= trafficS + 1);
  const slope = (value: (sample: SoakSample) => number | null) =>
    slopePerMinute(window.map((sample) => ({ atS: sample.atS, value: value(sample) })));
  const tableNames = Object.keys(samples[0]?.tablesMiB ?? {});
  return {
    fromS,
    toS: trafficS,
    samples: window.length,
    ownTablesMiBPerMin: slope((sample) => sample.ownTablesMiB),
    rewardsMiBPerMin: slope((sample) => sample.rewardsMiB),
    tablesMiBPerMin: Object.fromEntries(
      tableNames.map((name) => [name, slope((sample) => sample.tablesMiB[name] ?? null)]),
    ),
    redisMiBPerMin: slope((sample) => sample.redisUsedMiB),
    redisKeysPerMin: slope((sample) => sample.redisKeys),
    apiRssMiBPerMin: slope((sample) => sample.apiRssMiB),
    workerRssMiBPerMin: slope((sample) => sample.workerRssMiB),
  };
}

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
