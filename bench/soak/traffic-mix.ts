import { signedBody } from '../lib/merchant-client.js';
import { sleep } from '../lib/progress.js';
import type { SoakMerchant } from './soak-data.js';
import type { SoakSettings } from './soak-settings.js';

export const REQUEST_KINDS = ['singleCancel', 'bulkCancel', 'queryCancel', 'readAll', 'jobStatus'] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

const PATHS: Record<RequestKind, string> = {
  singleCancel: '/api/v1/integration/rewards/cancel',
  bulkCancel: '/api/v1/integration/rewards/bulkCancel',
  queryCancel: '/api/v1/integration/rewards/bulkCancelByQuery',
  readAll: '/api/v1/integration/reward-configurations/readAll',
  jobStatus: '/api/v1/integration/jobs/status',
};

/** Every answer of one kind: when it was sent (s since the traffic began), how long it took, its status. */
export interface KindRecord {
  sentAtS: number[];
  latencyMs: number[];
  /** HTTP status → count; `error` for no answer (connection refused or reset). */
  statuses: Record<string, number>;
  /**
   * Due but not sent: that many of this kind were already in flight (the client fell behind), no reward
   * was left, or (job status) the merchant had no job accepted in the last minute yet.
   */
  notSent: number;
}

export interface AcceptedJob {
  jobId: string;
  merchantId: string;
  /** Epoch ms of the 200. */
  acceptedAt: number;
}

/** Job status reads pick among the jobs accepted this recently (within RETENTION_MS: their records must still exist). */
const STATUS_READ_WINDOW_MS = 60_000;
const TICK_MS = 50;

/**
 * Drives the mix open-loop (requests leave on the clock, whatever the answers' speed, as independent
 * clients' would), spread round-robin over the merchants, and records every answer. What a 200
 * accepted is remembered for the end: the reward ids and players it promised to cancel, and its job.
 */
export class TrafficMix {
  readonly records = Object.fromEntries(
    REQUEST_KINDS.map((kind): [RequestKind, KindRecord] => [
      kind,
      { sentAtS: [], latencyMs: [], statuses: {}, notSent: 0 },
    ]),
  ) as Record<RequestKind, KindRecord>;
  /** Reward ids whose single or bulk cancel answered 200. */
  readonly acceptedRewardIds: string[] = [];
  /** Players whose bulkCancelByQuery answered 200 (every reward of theirs must end CANCELLED). */
  readonly acceptedPlayers: { merchantId: string; playerId: string }[] = [];
  readonly acceptedJobs: AcceptedJob[] = [];
  private readonly inFlight = Object.fromEntries(REQUEST_KINDS.map((kind) => [kind, 0])) as Record<RequestKind, number>;
  private readonly sent = Object.fromEntries(REQUEST_KINDS.map((kind) => [kind, 0])) as Record<RequestKind, number>;
  private readonly pending = new Set<Promise<void>>();
  private startedAt = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly merchants: readonly SoakMerchant[],
    private readonly settings: SoakSettings,
  ) {}

  /** Sends the mix until `durationMs` has passed or `stop()` says so, then waits for the answers in flight. */
  async run(durationMs: number, stop: () => boolean, onMinute: (minute: number) => void): Promise<void> {
    const rates: Record<RequestKind, number> = {
      singleCancel: this.settings.singleCancelsPerSecond,
      bulkCancel: 1 / this.settings.bulkCancelEverySeconds,
      queryCancel: 1 / this.settings.queryCancelEverySeconds,
      readAll: this.settings.readAllPerSecond,
      jobStatus: this.settings.jobStatusPerSecond,
    };
    this.startedAt = performance.now();
    let minutesReported = 0;
    for (;;) {
      const elapsedMs = performance.now() - this.startedAt;
      if (elapsedMs >= durationMs || stop()) break;
      for (const kind of REQUEST_KINDS) {
        // The first bulk and query cancels go at once rather than after one period.
        const due = Math.floor((elapsedMs / 1000) * rates[kind]) + (rates[kind] < 1 ? 1 : 0);
        while (this.sent[kind] < due) this.fire(kind);
      }
      const minute = Math.floor(elapsedMs / 60_000);
      if (minute > minutesReported) {
        minutesReported = minute;
        onMinute(minute);
      }
      await sleep(TICK_MS);
    }
    await Promise.allSettled([...this.pending]);
    // The last minute ends with the traffic, not inside the loop.
    const lastMinute = Math.round((performance.now() - this.startedAt) / 60_000);
    if (lastMinute > minutesReported) onMinute(lastMinute);
  }

  private fire(kind: RequestKind): void {
    const count = this.sent[kind]++;
    const record = this.records[kind];
    if (this.inFlight[kind] >= this.settings.maxInFlightPerKind) {
      record.notSent += 1;
      return;
    }
    const merchant = this.merchants[count % this.merchants.length] as SoakMerchant;
    const request = this.build(kind, merchant);
    if (!request) {
      record.notSent += 1;
      return;
    }
    this.inFlight[kind] += 1;
    const sentAt = performance.now();
    const done = this.send(kind, merchant, request)
      .then(({ status, jobId }) => {
        record.statuses[status] = (record.statuses[status] ?? 0) + 1;
        record.sentAtS.push((sentAt - this.startedAt) / 1000);
        record.latencyMs.push(performance.now() - sentAt);
        if (status === '200' && jobId) this.accepted(merchant, request, jobId);
      })
      .finally(() => {
        this.inFlight[kind] -= 1;
        this.pending.delete(done);
      });
    this.pending.add(done);
  }

  private build(kind: RequestKind, merchant: SoakMerchant): SoakRequest | null {
    switch (kind) {
      case 'singleCancel': {
        const id = merchant.idPool.pop();
        return id === undefined ? null : { kind, fields: { id }, rewardIds: [id], players: [] };
      }
      case 'bulkCancel': {
        if (merchant.idPool.length < this.settings.bulkCancelIds) return null;
        const ids = merchant.idPool.splice(-this.settings.bulkCancelIds);
        return { kind, fields: { ids }, rewardIds: ids, players: [] };
      }
      case 'queryCancel': {
        if (merchant.playerPool.length < this.settings.queryCancelPlayers) return null;
        const playerIds = merchant.playerPool.splice(-this.settings.queryCancelPlayers);
        return { kind, fields: { playerIds }, rewardIds: [], players: playerIds };
      }
      case 'readAll':
        return { kind, fields: {}, rewardIds: [], players: [] };
      case 'jobStatus': {
        const job = this.recentJob(merchant.id);
        return job ? { kind, fields: { jobId: job.jobId }, rewardIds: [], players: [] } : null;
      }
    }
  }

  /** A random job of this merchant's accepted in the last minute; null before its first. */
  private recentJob(merchantId: string): AcceptedJob | null {
    const since = Date.now() - STATUS_READ_WINDOW_MS;
    for (let attempt = 0; attempt < 20; attempt++) {
      // Biased to the recent end of the list, where the window's jobs are.
      const span = Math.min(this.acceptedJobs.length, 10_000);
      if (span === 0) return null;
      const job = this.acceptedJobs[this.acceptedJobs.length - 1 - Math.floor(Math.random() * span)];
      if (job && job.merchantId === merchantId && job.acceptedAt >= since) return job;
    }
    return null;
  }

  private accepted(merchant: SoakMerchant, request: SoakRequest, jobId: string): void {
    if (request.kind === 'readAll' || request.kind === 'jobStatus') return;
    for (const id of request.rewardIds) this.acceptedRewardIds.push(id);
    for (const playerId of request.players) this.acceptedPlayers.push({ merchantId: merchant.id, playerId });
    this.acceptedJobs.push({ jobId, merchantId: merchant.id, acceptedAt: Date.now() });
  }

  private async send(
    kind: RequestKind,
    merchant: SoakMerchant,
    request: SoakRequest,
  ): Promise<{ status: string; jobId: string | null }> {
    try {
      const response = await fetch(`${this.baseUrl}${PATHS[kind]}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(signedBody(merchant, request.fields)),
      });
      await response.arrayBuffer();
      return { status: String(response.status), jobId: response.headers.get('x-job-id') };
    } catch {
      return { status: 'error', jobId: null };
    }
  }
}

interface SoakRequest {
  kind: RequestKind;
  fields: Record<string, unknown>;
  rewardIds: string[];
  players: string[];
}
