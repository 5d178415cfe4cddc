import type { Check } from '../lib/checks.js';
import type { MachineInfo } from '../lib/machine.js';
import { percentile, round } from '../lib/percentiles.js';
import type { GrowthFigures, KindFigures, LatencyFigures, SoakResults } from './soak-figures.js';
import type { SoakSample } from './soak-sampler.js';
import type { SoakSettings } from './soak-settings.js';
import { type KindRecord, REQUEST_KINDS, type RequestKind, type TrafficMix } from './traffic-mix.js';
import type { WebhookArrival } from './webhook-sink.js';

/** The soak's figures from what it recorded: latency percentiles per request kind and minute, growth slopes. */

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

function perMinute(records: Record<RequestKind, KindRecord>, minutes: number): SoakResults['perMinute'] {
  return Array.from({ length: minutes }, (_, minute) => ({
    minute: minute + 1,
    singleCancel: latencyFigures(latenciesBetween(records.singleCancel, minute * 60, (minute + 1) * 60)),
    readAll: latencyFigures(latenciesBetween(records.readAll, minute * 60, (minute + 1) * 60)),
  }));
}

/** Least-squares slope of value over time (per minute); null with fewer than 3 points. */
function slopePerMinute(points: ReadonlyArray<{ atS: number; value: number | null }>): number | null {
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

function growthOverLastThird(samples: readonly SoakSample[], trafficS: number): GrowthFigures {
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

/** What the soak's main loop hands over once the traffic has stopped and the queues drained. */
export interface SoakRecords {
  settings: SoakSettings;
  machine: MachineInfo;
  notes: string[];
  traffic: TrafficMix;
  samples: SoakSample[];
  /** The sample taken after the drain (also in `samples`): the dead merchant's backlog at the end. */
  afterDrain: SoakSample;
  trafficS: number;
  /** Webhook arrivals at the healthy merchants' receivers. */
  arrivals: readonly WebhookArrival[];
  webhookEvents: { expected: number; received: number };
  dead: { merchantId: string; acceptedJobs: number; refusedAttempts: number };
  checks: Check[];
}

/** The run's figures (without the judged ones, evaluateFigures adds them). */
export function summarizeSoak(records: SoakRecords): Omit<SoakResults, 'figures'> {
  const { settings, traffic, afterDrain, trafficS } = records;
  const requests = Object.fromEntries(
    REQUEST_KINDS.map((kind) => [kind, kindFigures(traffic.records[kind])]),
  ) as SoakResults['requests'];
  const thirdFromS = (trafficS * 2) / 3;
  const minuteTwo = percentile(latenciesBetween(traffic.records.singleCancel, 60, 120), 99);
  const lastThird = percentile(latenciesBetween(traffic.records.singleCancel, thirdFromS, trafficS), 99);
  const delays = records.arrivals.map((arrival) => arrival.delayMs);
  const trafficSamples = records.samples.filter((sample) => sample !== afterDrain);
  const firstSample = trafficSamples[0];
  const lastTrafficSample = trafficSamples.at(-1);
  const acceptedRewards = traffic.acceptedRewardIds.length + traffic.acceptedPlayers.length * settings.rewardsPerPlayer;
  const deadWindow = trafficSamples.filter((sample) => sample.atS >= thirdFromS);
  return {
    at: new Date().toISOString(),
    minutes: settings.minutes,
    durationSeconds: 0,
    machine: records.machine,
    settings,
    notes: records.notes,
    requests,
    perMinute: perMinute(traffic.records, settings.minutes),
    singleCancelP99: {
      minuteTwoMs: minuteTwo === null ? null : round(minuteTwo, 1),
      lastThirdMs: lastThird === null ? null : round(lastThird, 1),
      ratio: minuteTwo && lastThird !== null && settings.minutes >= 2 ? round(lastThird / minuteTwo, 2) : null,
    },
    acceptedRewards,
    growth: growthOverLastThird(trafficSamples, trafficS),
    ownBytesPerAcceptedReward:
      firstSample && lastTrafficSample && acceptedRewards > 0
        ? Math.round(((lastTrafficSample.ownTablesMiB - firstSample.ownTablesMiB) * 1024 * 1024) / acceptedRewards)
        : null,
    webhooks: {
      ...records.webhookEvents,
      p50DelayMs: percentile(delays, 50),
      p99DelayMs: percentile(delays, 99),
      maxDelayMs: delays.length > 0 ? Math.max(...delays) : null,
      over10s: delays.filter((delay) => delay > 10_000).length,
    },
    deadReceiver: {
      ...records.dead,
      pendingDeliveriesAtEnd: afterDrain.deadPendingDeliveries,
      webhookQueueAtEnd: afterDrain.webhookQueue,
      pendingPerMinuteLastThird: slopePerMinute(
        deadWindow.map((sample) => ({ atS: sample.atS, value: sample.deadPendingDeliveries })),
      ),
    },
    samples: records.samples,
    checks: records.checks,
  };
}
