import { randomUUID } from 'node:crypto';
import { type JobReportSummary, saveJobReport } from './job-report.js';
import type { components } from './merchant-api.js';
import { signatureHeader, signV1 } from './signing.js';
import { splitWithinLimits, type Tagged } from './split.js';
import { type JobEvent, watchJobEvents } from './watch.js';

type Schemas = components['schemas'];
export type JobStatus = Schemas['JobStatus'];
export type RewardConfiguration = Schemas['RewardConfiguration'];
export type JobReward = Schemas['JobRewardsPage']['rewards'][number];
export type UnappliedIdentifier = Schemas['JobUnappliedPage']['identifiers'][number];
type ReadAllFilters = Omit<Schemas['ReadAllRequest'], 'merchantId' | 'timestamp' | 'hash'>;
type JobsFilters = Pick<Schemas['ListJobsRequest'], 'states' | 'operations' | 'limit'>;
export type WebhookEndpoint = Schemas['Webhook'];
export type NewWebhookEndpoint = Schemas['NewWebhook'];
export type WebhookDelivery = Schemas['WebhookDeliveries']['deliveries'][number];
type WebhookDeliveriesFilters = Partial<
  Pick<Schemas['WebhookDeliveriesRequest'], 'status' | 'type' | 'jobId' | 'limit'>
>;

export interface MerchantClientOptions {
  baseUrl: string;
  merchantId: string;
  secret: string;
  /** 2: also send X-Signature over each request's exact bytes (the merchant's signatureVersion). */
  signatureVersion?: 1 | 2;
  /** Attempts per request, the first included (default 6). */
  maxAttempts?: number;
  /**
   * The longest Retry-After waited for, in ms (default 30 s): an answer asking for longer (a merchant's
   * bound of Idempotency-Keys reached, say, which frees up in hours) is thrown, not slept on.
   */
  maxDelayMs?: number;
  /** The service's limits, if the operator changed them (docs/interface.md, "Limits"). */
  limits?: { maxItems?: number; maxBodyBytes?: number; maxQueuedJobs?: number };
  /** For tests: the fetch and the wait to use. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

/** An answer the client does not retry (or no longer): the service's errorCode and message. */
export class MerchantApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: number | null,
    readonly errorMessage: string,
    readonly retryAfterSeconds: number | null,
  ) {
    super(`HTTP ${status}${errorCode === null ? '' : ` errorCode ${errorCode}`}: ${errorMessage}`);
    this.name = 'MerchantApiError';
  }
}

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  /** A successful answer's body still unread (`stream`). */
  stream?: ReadableStream<Uint8Array> | null;
}

interface SendOptions {
  /** Sent on every attempt of a cancel, so a retry after a lost answer cannot queue a second job. */
  idempotencyKey?: string;
  /** `Prefer: return=representation`: a cancel then answers its job id as JSON too, not in X-Job-Id only. */
  representation?: boolean;
  /** A `409` without Retry-After is final; some callers want it as an answer rather than an error. */
  accept?: readonly number[];
  /** A successful answer's body is left unread for the caller (a report); extra request headers. */
  stream?: { headers: Record<string, string> };
  /**
   * false: no retry when the outcome is unknown (no answer, a 5xx), for requests whose repeat would do
   * something again (rotating a secret twice, sending an event twice). Default true.
   */
  retryUnknownOutcome?: boolean;
}

const DEFAULT_LIMITS = { maxItems: 10_000, maxBodyBytes: 2 * 1024 * 1024, maxQueuedJobs: 100 };
const SERVER_TIME = /server time (\d+)/;

/**
 * The hand-written layer over the generated types (merchant-api.ts): signs every request over the
 * exact bytes sent, keeps its clock in step with the server's, retries only what is safe (reads; cancels,
 * always under an Idempotency-Key) after Retry-After plus jitter, splits bulk cancels within the limits,
 * waits for jobs and walks pages.
 */
export class MerchantClient {
  private readonly baseUrl: string;
  private readonly limits: typeof DEFAULT_LIMITS;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  /** Server clock minus ours, in ms: learned from the Date header and from errorCode 3. */
  private clockOffsetMs = 0;

  constructor(private readonly options: MerchantClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.fetchImpl = options.fetch ?? fetch;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** What the client believes the server's clock says (epoch ms). */
  serverNow(): number {
    return Date.now() + this.clockOffsetMs;
  }

  async readAll(filters: ReadAllFilters = {}): Promise<RewardConfiguration[]> {
    return (await this.send('/api/v1/integration/reward-configurations/readAll', filters))
      .body as RewardConfiguration[];
  }

  /** Cancels one reward; answers its job id. The Idempotency-Key is generated unless given. */
  async cancel(target: { id: string } | { externalId: string }, idempotencyKey: string = randomUUID()) {
    const answer = await this.send('/api/v1/integration/rewards/cancel', target, {
      idempotencyKey,
      representation: true,
    });
    return this.jobIdOf(answer);
  }

  /**
   * Cancels rewards by ids and externalIds, any number of them: split into requests within the item
   * and byte limits, sent one after another, never more than the queued-job cap of this merchant's jobs
   * at once (it waits for the oldest to finish). Each part has its own Idempotency-Key derived from
   * `idempotencyKey`, so running the same call again (after a crash, say) replays instead of requeueing.
   */
  async bulkCancel(
    lists: { ids?: readonly string[]; externalIds?: readonly string[] },
    idempotencyKey: string = randomUUID(),
  ): Promise<string[]> {
    const entries: Tagged<'ids' | 'externalIds'>[] = [
      ...(lists.ids ?? []).map((value) => ({ list: 'ids' as const, value })),
      ...(lists.externalIds ?? []).map((value) => ({ list: 'externalIds' as const, value })),
    ];
    return this.sendParts(entries, idempotencyKey, '/api/v1/integration/rewards/bulkCancel', (part) => ({
      ids: part.filter((entry) => entry.list === 'ids').map((entry) => entry.value),
      externalIds: part.filter((entry) => entry.list === 'externalIds').map((entry) => entry.value),
    }));
  }

  /** Cancels the ACTIVE rewards of any number of players, split as bulkCancel is. */
  async bulkCancelByQuery(
    query: { playerIds: readonly string[]; rewardConfigurationId?: string; externalRewardConfigurationId?: string },
    idempotencyKey: string = randomUUID(),
  ): Promise<string[]> {
    const { playerIds, ...filter } = query;
    const entries = playerIds.map((value) => ({ list: 'playerIds' as const, value }));
    return this.sendParts(entries, idempotencyKey, '/api/v1/integration/rewards/bulkCancelByQuery', (part) => ({
      playerIds: part.map((entry) => entry.value),
      ...filter,
    }));
  }

  async jobStatus(jobId: string): Promise<JobStatus> {
    return (await this.send('/api/v1/integration/jobs/status', { jobId })).body as JobStatus;
  }

  /** Aborts a job; a job that had already finished answers its status as it is. */
  async abortJob(jobId: string): Promise<JobStatus> {
    const answer = await this.send('/api/v1/integration/jobs/cancel', { jobId }, { accept: [409] });
    return answer.status === 409 ? this.jobStatus(jobId) : (answer.body as JobStatus);
  }

  /** Polls the job's status until it is completed, failed or cancelled. */
  async waitForJob(jobId: string, { timeoutMs = 600_000, intervalMs = 250 } = {}): Promise<JobStatus> {
    const deadline = Date.now() + timeoutMs;
    for (let interval = intervalMs; ; interval = Math.min(interval * 2, 5_000)) {
      const status = await this.jobStatus(jobId);
      if (status.state === 'completed' || status.state === 'failed' || status.state === 'cancelled') return status;
      if (Date.now() > deadline) throw new Error(`job ${jobId} still ${status.state} after ${timeoutMs} ms`);
      await this.sleep(interval);
    }
  }

  /** The rewards a job cancelled, every page (a 409 "still being listed" is waited out). */
  /**
   * The job's events as they happen (GET jobs/events): `progress` at most once a second, then the final
   * event (`completed`, `failed`, `cancelled`), after which the iteration ends. Reconnects by itself.
   */
  watch(jobId: string): AsyncGenerator<JobEvent> {
    return watchJobEvents(
      {
        baseUrl: this.baseUrl,
        merchantId: this.options.merchantId,
        secret: this.options.secret,
        signatureVersion: this.options.signatureVersion ?? 1,
        fetch: this.fetchImpl,
        sleep: this.sleep,
        serverNow: () => this.serverNow(),
        maxAttempts: this.options.maxAttempts ?? 6,
        refused: (status, body, retryAfter) =>
          new MerchantApiError(status, body.errorCode ?? null, body.errorMessage ?? '', retryAfter),
      },
      jobId,
    );
  }

  async *jobRewards(jobId: string, limit = 1_000): AsyncGenerator<JobReward> {
    let after: string | null = null;
    do {
      const fields: Record<string, unknown> = { jobId, limit, ...(after === null ? {} : { after }) };
      const page = (await this.send('/api/v1/integration/jobs/rewards', fields)).body as Schemas['JobRewardsPage'];
      yield* page.rewards;
      after = page.next;
    } while (after !== null);
  }

  /** The identifiers a bulkCancel did not cancel, each with why (notFound, notCancellable, alreadyCancelled). */
  async *jobUnapplied(jobId: string, limit = 1_000): AsyncGenerator<UnappliedIdentifier> {
    let after: Schemas['UnappliedCursor'] | null = null;
    do {
      const fields: Record<string, unknown> = { jobId, limit, ...(after === null ? {} : { after }) };
      const page = (await this.send('/api/v1/integration/jobs/unapplied', fields)).body as Schemas['JobUnappliedPage'];
      yield* page.identifiers;
      after = page.next;
    } while (after !== null);
  }

  /**
   * Saves a finished bulk job's report (NDJSON, one line per requested identifier with its outcome, then
   * a summary line) to `path`, verifying its checksum; answers the summary. A job still running is waited
   * out (409 with Retry-After), as a 429 or 503 is. `gzip` (default true) asks for a compressed transfer;
   * the file holds the decoded NDJSON either way.
   */
  async downloadReport(jobId: string, path: string, { gzip = true } = {}): Promise<JobReportSummary> {
    const headers = { 'accept-encoding': gzip ? 'gzip' : 'identity' };
    const answer = await this.send('/api/v1/integration/jobs/report', { jobId }, { stream: { headers } });
    if (!answer.stream) throw new MerchantApiError(answer.status, null, 'a report answer without a body', null);
    return saveJobReport(answer.stream, path);
  }

  /** The merchant's jobs, newest first, every page. */
  async *jobs(filters: JobsFilters = {}): AsyncGenerator<JobStatus> {
    let after: string | null = null;
    do {
      const fields: Record<string, unknown> = { ...filters, ...(after === null ? {} : { after }) };
      const page = (await this.send('/api/v1/integration/jobs/list', fields)).body as Schemas['JobsPage'];
      yield* page.jobs;
      after = page.next;
    } while (after !== null);
  }

  /** Your webhook endpoint (never its secret); null when none is set. */
  async getWebhook(): Promise<WebhookEndpoint | null> {
    const answer = await this.send('/api/v1/integration/webhooks/get', {}, { accept: [404] });
    return answer.status === 404 ? null : (answer.body as WebhookEndpoint);
  }

  /** Sets your endpoint with a new secret, shown only in this answer (the old secret stops at once). */
  async putWebhook(settings: { url: string; events?: WebhookEndpoint['events'] }): Promise<NewWebhookEndpoint> {
    return (await this.send('/api/v1/integration/webhooks/put', settings)).body as NewWebhookEndpoint;
  }

  /** Removes your endpoint; false when there was none. */
  async deleteWebhook(): Promise<boolean> {
    return ((await this.send('/api/v1/integration/webhooks/delete', {})).body as { removed: boolean }).removed;
  }

  /** A new secret (shown once); the previous one keeps signing beside it until previousSecretExpiresAt. */
  async rotateWebhookSecret(): Promise<Schemas['RotatedWebhookSecret']> {
    const answer = await this.send('/api/v1/integration/webhooks/rotateSecret', {}, { retryUnknownOutcome: false });
    return answer.body as Schemas['RotatedWebhookSecret'];
  }

  /** Your delivery log, newest first, every page (each delivery with its attempts). */
  async *webhookDeliveries(filters: WebhookDeliveriesFilters = {}): AsyncGenerator<WebhookDelivery> {
    let after: string | null = null;
    do {
      const fields: Record<string, unknown> = { ...filters, ...(after === null ? {} : { after }) };
      const page = (await this.send('/api/v1/integration/webhooks/deliveries', fields))
        .body as Schemas['WebhookDeliveries'];
      yield* page.deliveries;
      after = page.next;
    } while (after !== null);
  }

  /** Sends one event again (one attempt, the same webhook-id); answers its webhook-id. */
  async redeliverWebhookEvent(eventId: string): Promise<string> {
    const answer = await this.send(
      '/api/v1/integration/webhooks/redeliver',
      { eventId },
      { retryUnknownOutcome: false },
    );
    return (answer.body as Schemas['WebhookRedelivered']).eventId;
  }

  /** Sends again every event since `since` (epoch ms) that was not delivered; answers how many. */
  async recoverWebhookEvents(since: number): Promise<Schemas['WebhookRecovery']> {
    const answer = await this.send('/api/v1/integration/webhooks/recover', { since }, { retryUnknownOutcome: false });
    return answer.body as Schemas['WebhookRecovery'];
  }

  /** Sends a webhook.test event to your endpoint; answers its webhook-id. */
  async sendWebhookTestEvent(): Promise<string> {
    const answer = await this.send('/api/v1/integration/webhooks/test', {}, { retryUnknownOutcome: false });
    return (answer.body as Schemas['WebhookTestSent']).eventId;
  }

  private async sendParts<T extends string>(
    entries: Tagged<T>[],
    idempotencyKey: string,
    path: string,
    fieldsOf: (part: Tagged<T>[]) => Record<string, unknown>,
  ): Promise<string[]> {
    const parts = splitWithinLimits(entries, this.limits);
    const jobIds: string[] = [];
    const inFlight: string[] = [];
    for (const [index, part] of parts.entries()) {
      // Stay under the merchant's cap of queued bulk jobs: wait for the oldest of ours first.
      if (inFlight.length >= this.limits.maxQueuedJobs) await this.waitForJob(inFlight.shift() as string);
      const answer = await this.send(path, fieldsOf(part), {
        idempotencyKey: `${idempotencyKey}.${index}`,
        representation: true,
      });
      const jobId = this.jobIdOf(answer);
      jobIds.push(jobId);
      inFlight.push(jobId);
    }
    return jobIds;
  }

  /** The body's `{jobId}` (asked for), else X-Job-Id: the interface's answer, should a proxy drop Prefer. */
  private jobIdOf(answer: Answer): string {
    const fromBody = (answer.body as { jobId?: string } | null)?.jobId;
    const jobId = fromBody ?? answer.headers.get('x-job-id');
    if (!jobId) throw new MerchantApiError(answer.status, null, 'answer without a job id', null);
    return jobId;
  }

  /**
   * One request, signed afresh on every attempt (a retry's timestamp must be current), retried when that
   * is safe: 429 and 503 (nothing was done), a 409 with Retry-After, 401 errorCode 3 once the clock is
   * corrected, and a 500 or a network failure when the request is a read or carries an Idempotency-Key.
   */
  private async send(path: string, fields: Record<string, unknown>, options: SendOptions = {}): Promise<Answer> {
    const maxAttempts = this.options.maxAttempts ?? 6;
    let clockCorrected = false;
    for (let attempt = 1; ; attempt += 1) {
      const last = attempt >= maxAttempts;
      let answer: Answer;
      try {
        answer = await this.attempt(path, fields, options);
      } catch (error) {
        // No answer at all: a read may be repeated, and a cancel under its key replays, never requeues.
        if (last || options.retryUnknownOutcome === false) throw error;
        await this.sleep(backoffMs(attempt, null));
        continue;
      }
      if (answer.status >= 200 && answer.status < 300) return answer;
      if (options.accept?.includes(answer.status)) return answer;
      const { errorCode, errorMessage } = (answer.body ?? {}) as { errorCode?: number; errorMessage?: string };
      const retryAfter = retryAfterSeconds(answer.headers);
      const error = new MerchantApiError(answer.status, errorCode ?? null, errorMessage ?? '', retryAfter);
      if (answer.status === 401 && errorCode === 3 && !clockCorrected) {
        const serverTime = SERVER_TIME.exec(errorMessage ?? '')?.[1];
        if (serverTime) this.clockOffsetMs = Number(serverTime) - Date.now();
        clockCorrected = true;
        continue;
      }
      const retryable =
        answer.status === 429 ||
        answer.status === 503 ||
        (answer.status === 409 && retryAfter !== null) ||
        (options.retryUnknownOutcome !== false &&
          (answer.status === 500 || answer.status === 502 || answer.status === 504));
      if (!retryable || last) throw error;
      if (retryAfter !== null && retryAfter * 1_000 > (this.options.maxDelayMs ?? 30_000)) throw error;
      await this.sleep(backoffMs(attempt, retryAfter));
    }
  }

  private async attempt(path: string, fields: Record<string, unknown>, options: SendOptions): Promise<Answer> {
    const { merchantId, secret } = this.options;
    const timestamp = this.serverNow();
    // The very bytes that are sent are the ones X-Signature covers.
    const body = Buffer.from(
      JSON.stringify({ merchantId, timestamp, hash: signV1(merchantId, secret, timestamp), ...fields }),
      'utf8',
    );
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.signatureVersion === 2)
      headers['x-signature'] = signatureHeader(secret, timestamp, 'POST', path, body);
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    if (options.representation) headers.prefer = 'return=representation';
    Object.assign(headers, options.stream?.headers);
    const sentAt = Date.now();
    const response = await this.fetchImpl(`${this.baseUrl}${path}`, { method: 'POST', headers, body });
    this.learnClock(response.headers.get('date'), sentAt);
    if (options.stream && response.ok)
      return { status: response.status, headers: response.headers, body: null, stream: response.body };
    const text = await response.text();
    let parsed: unknown = null;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = { errorMessage: text.slice(0, 200) };
      }
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }

  /** The Date header has whole seconds: it corrects a clock that is off by more than that, no finer. */
  private learnClock(date: string | null, sentAt: number): void {
    const server = date === null ? Number.NaN : Date.parse(date);
    if (Number.isNaN(server)) return;
    const local = (sentAt + Date.now()) / 2;
    const offset = server + 500 - local;
    if (Math.abs(offset - this.clockOffsetMs) > 2_000) this.clockOffsetMs = offset;
  }
}

function retryAfterSeconds(headers: Headers): number | null {
  const value = headers.get('retry-after');
  if (value === null || !/^\d+$/.test(value.trim())) return null;
  return Number(value);
}

/** Retry-After when the service gave one, else exponential; plus up to a quarter more of jitter, so clients spread out. */
function backoffMs(attempt: number, retryAfter: number | null): number {
  const base = retryAfter === null ? Math.min(200 * 2 ** (attempt - 1), 10_000) : retryAfter * 1_000;
  return base + Math.random() * Math.max(base / 4, 100);
}
