import type { Check } from '../lib/checks.js';
import type { MachineInfo } from '../lib/machine.js';
import type { SoakSample } from './soak-sampler.js';
import type { SoakSettings } from './soak-settings.js';
import type { RequestKind } from './traffic-mix.js';

/** What a soak run measured, as bench/results/soak.json holds it. */

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
