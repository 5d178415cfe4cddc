import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfiguration, createMerchant, createSession, type MerchantFixture } from '../helpers/fixtures.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { type ServiceProcess, startService } from '../helpers/processes.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

/**
 * Tracing end to end (docs/operations.md, "Tracing"): the API and the worker as separate processes
 * export OTLP/HTTP JSON to a receiver this test runs. A signed bulkCancel and a bulkCancelByQuery that
 * fans out each make one trace holding the API's spans, the worker's job, its batches, their SQL,
 * Redis commands and the webhook delivery; no span carries a secret, a signature, a token or a player.
 */

const PLAYERS = 30;
const API_SERVICE = 'rewards-gateway-api';
const WORKER_SERVICE = 'rewards-gateway-worker';

const { env } = useTestContext();
let api: ServiceProcess;
let worker: ServiceProcess;
let merchant: MerchantFixture;
let otlp: OtlpReceiver;
let hooks: WebhookReceiver;
let rewardIds: string[];
/** Every value a span must never hold: signatures, the secret, the session token, player ids. */
const secrets: string[] = [];

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  const configuration = await createConfiguration(env.db, {
    merchantId: merchant.id,
    externalId: 'tracing-e2e',
    startDate: Date.now(),
  });
  const inserted = await sql<{ id: string }>`
    INSERT INTO rewards (merchant_id, reward_configuration_id, player_id, external_id, status)
    SELECT ${merchant.id}::uuid, ${configuration.id}::uuid, 'traced-player-' || p, 'traced-' || p || '-' || n, 'ACTIVE'
    FROM generate_series(0, ${PLAYERS - 1}) AS p, generate_series(1, 3) AS n
    RETURNING id
  `.execute(env.db);
  rewardIds = inserted.rows.map((row) => row.id);
  [otlp, hooks] = await Promise.all([startOtlpReceiver(), startWebhookReceiver()]);
  const settings = {
    ADMIN_TOKEN: env.config.ADMIN_TOKEN,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // Past 10 players a query job is split into parts of 10.
    FANOUT_THRESHOLD: '10',
    FANOUT_CHUNK_SIZE: '10',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '200',
  };
  [api, worker] = await Promise.all([startService('api', env, settings), startService('worker', env, settings)]);
  secrets.push(merchant.secretKey);
}, 120_000);

afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
  await Promise.all([otlp?.close(), hooks?.close()]);
});

async function post(
  path: string,
  fields: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Response> {
  const body = signedBody(merchant, fields);
  secrets.push(String(body.hash));
  return fetch(`${api.baseUrl}/api/v1/integration/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function completed(jobId: string): Promise<void> {
  await eventually(
    async () => {
      const status = (await (await post('jobs/status', { jobId })).json()) as { state: string };
      return status.state === 'completed' ? true : undefined;
    },
    { timeoutMs: 30_000, what: `job ${jobId} to complete` },
  );
}

/** The spans of the trace in which some span carries `job.id` = jobId, once `done` holds for them. */
async function traceOf(jobId: string, done: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  return eventually(
    async () => {
      const enqueue = otlp.spans.find((span) => span.service === API_SERVICE && span.attributes['job.id'] === jobId);
      if (!enqueue) return undefined;
      const spans = otlp.spans.filter((span) => span.traceId === enqueue.traceId);
      return done(spans) ? spans : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, what: `the trace of job ${jobId}` },
  );
}

const isRedis = (span: ReceivedSpan) =>
  span.attributes['db.system'] === 'redis' || span.attributes['db.system.name'] === 'redis';
const isPostgres = (span: ReceivedSpan) =>
  span.attributes['db.system'] === 'postgresql' || span.attributes['db.system.name'] === 'postgresql';
/** BullMQ's span of a run of a job (queue-telemetry.ts), told apart by the service's `job.kind`. */
const isRunOf = (kind: string) => (span: ReceivedSpan) =>
  span.name === 'process bulk-cancel' && span.attributes['job.kind'] === kind;
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;
const SPAN_ERROR = 2;

describe('tracing: one trace per merchant request, across the API and worker processes', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    const put = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchant.id}/webhook`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${hooks.url}/hooks?token=webhook-query-secret`, events: ['job.completed'] }),
    });
    expect(put.status).toBe(200);
    secrets.push(((await put.json()) as { secret: string }).secret, 'webhook-query-secret');
  });

  it('a bulkCancel: the request, its enqueue, the job, its batch and SQL, Redis and the webhook', async () => {
    const accepted = await post('rewards/bulkCancel', { ids: rewardIds.slice(0, 5) });
    expect(accepted.status).toBe(200);
    const jobId = accepted.headers.get('x-job-id') as string;
    await completed(jobId);

    const spans = await traceOf(jobId, (found) => {
      const delivery = found.find((span) => span.name === 'webhook delivery');
      return found.some(
        (span) => span.attributes['http.request.method'] === 'POST' && span.parentSpanId === delivery?.spanId,
      );
    });
    const services = new Set(spans.map((span) => span.service));
    expect(services).toEqual(new Set([API_SERVICE, WORKER_SERVICE]));
    const server = spans.find((span) => span.service === API_SERVICE && span.kind === SERVER);
    expect(server?.parentSpanId).toBe('');
    const enqueue = spans.find((span) => span.name === 'enqueue bulkCancel');
    // The API's spans have explicit parents (src/api/http/server-span.ts): the request's server span and,
    // as its child, the enqueue; the enqueue's child is BullMQ's add, whose context the job carries to
    // the worker, where the job's run is the add's child.
    expect(enqueue).toMatchObject({ service: API_SERVICE, parentSpanId: server?.spanId });
    expect(enqueue?.attributes['merchant.id']).toBe(merchant.id);
    const add = spans.find((span) => span.name === 'add bulk-cancel.bulkCancel');
    expect(add).toMatchObject({ service: API_SERVICE, parentSpanId: enqueue?.spanId });
    const job = spans.find(isRunOf('bulkCancel'));
    expect(job).toMatchObject({ service: WORKER_SERVICE, parentSpanId: add?.spanId });
    expect(job?.attributes).toMatchObject({ 'job.id': jobId, 'job.kind': 'bulkCancel', 'merchant.id': merchant.id });
    expect(job?.attributes['job.result.cancelled']).toBe(5);
    const batch = spans.find((span) => span.name === 'cancel batch');
    expect(batch).toMatchObject({
      parentSpanId: job?.spanId,
      attributes: { 'batch.identifiers': 5, 'batch.cancelled': 5 },
    });
    expect(spans.some((span) => isPostgres(span) && span.parentSpanId === batch?.spanId)).toBe(true);
    expect(spans.some((span) => isRedis(span) && span.service === WORKER_SERVICE)).toBe(true);
    const delivery = spans.find((span) => span.name === 'webhook delivery');
    expect(delivery?.attributes).toMatchObject({ 'job.id': jobId, 'webhook.outcome': 'delivered' });
    // The POST to the merchant's endpoint is the delivery's child, its URL without the query.
    const outgoing = spans.find(
      (span) => span.parentSpanId === delivery?.spanId && span.attributes['http.request.method'] === 'POST',
    );
    expect(outgoing?.kind).toBe(CLIENT);
    expect(String(outgoing?.attributes['url.full'] ?? outgoing?.attributes['http.url'])).toBe(`${hooks.url}/hooks`);
  });

  it("follows the caller's sampling decision in both processes: unsampled leaves no span, sampled is the parent", async () => {
    const traceparent = (sampled: boolean) => {
      const traceId = randomBytes(16).toString('hex');
      const parentId = randomBytes(8).toString('hex');
      return { traceId, parentId, header: `00-${traceId}-${parentId}-${sampled ? '01' : '00'}` };
    };
    const unsampled = traceparent(false);
    const sampled = traceparent(true);
    const cancel = async (caller: { header: string }, id: string | undefined) => {
      const accepted = await post('rewards/bulkCancel', { ids: [id] }, { traceparent: caller.header });
      expect(accepted.status).toBe(200);
      const jobId = accepted.headers.get('x-job-id') as string;
      await completed(jobId);
      return jobId;
    };
    // The unsampled request's work ends first, webhook delivered and all; only then the sampled one's.
    const unsampledJob = await cancel(unsampled, rewardIds[20]);
    await eventually(async () => hooks.received.find((hook) => hook.body.includes(unsampledJob)), {
      timeoutMs: 30_000,
      what: "the unsampled job's webhook",
    });
    const sampledJob = await cancel(sampled, rewardIds[21]);
    // Each process exports its spans in the order they end: once the sampled request's server span
    // (API) and its webhook delivery (worker) have arrived, a span of the unsampled request's, which
    // ended earlier, would have arrived before them.
    const spans = await eventually(
      async () => {
        const found = otlp.spans.filter((span) => span.traceId === sampled.traceId);
        const delivered = found.some(
          (span) => span.name === 'webhook delivery' && span.attributes['job.id'] === sampledJob,
        );
        return delivered && found.some((span) => span.kind === SERVER) ? found : undefined;
      },
      { timeoutMs: 30_000, what: "the sampled caller's server span and webhook delivery" },
    );
    // The caller's span is the server span's parent.
    expect(spans.find((span) => span.kind === SERVER)).toMatchObject({
      service: API_SERVICE,
      parentSpanId: sampled.parentId,
    });
    // The unsampled request left no span in either process: its job carried the decision to the worker,
    // which would otherwise have started a trace of its own.
    expect(otlp.spans.filter((span) => span.traceId === unsampled.traceId)).toEqual([]);
    expect(otlp.spans.filter((span) => span.attributes['job.id'] === unsampledJob)).toEqual([]);
  });

  it('a bulkCancelByQuery split into parts: each part under the job span, all in the one trace', async () => {
    const playerIds = Array.from({ length: PLAYERS }, (_, index) => `traced-player-${index}`);
    secrets.push(...playerIds);
    const accepted = await post('rewards/bulkCancelByQuery', { playerIds });
    expect(accepted.status).toBe(200);
    const jobId = accepted.headers.get('x-job-id') as string;
    await completed(jobId);

    const spans = await traceOf(
      jobId,
      (found) =>
        found.filter(isRunOf('bulkCancelPart')).length === 3 && found.some((span) => span.name === 'webhook delivery'),
    );
    const enqueue = spans.find((span) => span.name === 'enqueue bulkCancelByQuery');
    const add = spans.find((span) => span.name === 'add bulk-cancel.bulkCancelByQuery');
    expect(add?.parentSpanId).toBe(enqueue?.spanId);
    const runs = spans.filter(isRunOf('bulkCancelByQuery'));
    // The split run and the run that sums the parts' counts, both children of the enqueue's add.
    expect(runs.length).toBeGreaterThanOrEqual(2);
    for (const run of runs) expect(run.parentSpanId).toBe(add?.spanId);
    // The split run parks the job until its parts finish: not an error.
    for (const run of runs) expect(run.status).not.toBe(SPAN_ERROR);
    const split = runs.find((run) => run.attributes['job.parts'] === 3);
    expect(split).toBeDefined();
    // The split run adds the parts (BullMQ's addBulk, its child); each part's run is a child of that add.
    const addParts = spans.find((span) => span.name === 'addBulk bulk-cancel');
    expect(addParts?.parentSpanId).toBe(split?.spanId);
    const parts = spans.filter(isRunOf('bulkCancelPart'));
    for (const part of parts) {
      expect(part.parentSpanId).toBe(addParts?.spanId);
      expect(part.attributes['job.root_id']).toBe(jobId);
      expect(spans.some((span) => span.name === 'cancel batch' && span.parentSpanId === part.spanId)).toBe(true);
    }
    expect(spans.filter(isPostgres).length).toBeGreaterThan(0);
    expect(spans.some((span) => span.name === 'webhook delivery' && span.attributes['job.id'] === jobId)).toBe(true);
  });

  it('single cancels: each request its own trace, the coalesced write linked to each', async () => {
    const answers = await Promise.all(rewardIds.slice(10, 13).map((id) => post('rewards/cancel', { id })));
    const jobIds = await Promise.all(answers.map(async (answer) => answer.headers.get('x-job-id') as string));
    await Promise.all(jobIds.map((jobId) => completed(jobId)));
    const enqueues = await eventually(
      async () => {
        const found = jobIds.map((jobId) =>
          otlp.spans.find((span) => span.name === 'enqueue cancel' && span.attributes['job.id'] === jobId),
        );
        return found.every((span) => span !== undefined) ? (found as ReceivedSpan[]) : undefined;
      },
      { timeoutMs: 30_000, what: 'the enqueue spans of the single cancels' },
    );
    const linked = await eventually(
      async () => {
        const writes = otlp.spans.filter((span) => span.name === 'coalesced cancels');
        const links = writes.flatMap((write) => write.links.map((link) => link.spanId));
        return enqueues.every((enqueue) => links.includes(enqueue.spanId)) ? writes : undefined;
      },
      { timeoutMs: 30_000, what: 'the coalesced write linked to each request' },
    );
    expect(linked.length).toBeGreaterThan(0);
  });

  it('an unsampled single cancel: no span of its trace, and no link to it from the coalesced write', async () => {
    const caller = (sampled: boolean) => {
      const traceId = randomBytes(16).toString('hex');
      return { traceId, header: `00-${traceId}-${randomBytes(8).toString('hex')}-${sampled ? '01' : '00'}` };
    };
    const cancel = async (traceparent: string, id: string | undefined) => {
      const accepted = await post('rewards/cancel', { id }, { traceparent });
      expect(accepted.status).toBe(200);
      const jobId = accepted.headers.get('x-job-id') as string;
      await completed(jobId);
      return jobId;
    };
    const unsampled = caller(false);
    const sampled = caller(true);
    await cancel(unsampled.header, rewardIds[14]);
    const sampledJob = await cancel(sampled.header, rewardIds[15]);
    // The worker exports spans in the order they end: once the sampled request's coalesced write (which
    // ended after the unsampled one's) has arrived, the unsampled one's has too.
    await eventually(
      async () => {
        const enqueue = otlp.spans.find(
          (span) => span.name === 'enqueue cancel' && span.attributes['job.id'] === sampledJob,
        );
        if (!enqueue) return undefined;
        return otlp.spans.some(
          (span) => span.name === 'coalesced cancels' && span.links.some((link) => link.spanId === enqueue.spanId),
        )
          ? true
          : undefined;
      },
      { timeoutMs: 30_000, what: 'the coalesced write linked to the sampled request' },
    );
    expect(otlp.spans.filter((span) => span.traceId === unsampled.traceId)).toEqual([]);
    expect(otlp.spans.filter((span) => span.links.some((link) => link.traceId === unsampled.traceId))).toEqual([]);
  });

  it('no span holds a secret, a signature, a session token or a player, whatever the route (GET /betSlip too)', async () => {
    const session = await createSession(env.db, { merchantId: merchant.id, playerId: 'traced-player-slip' });
    secrets.push(session.token, 'traced-player-slip');
    const body = signedBody(merchant, { authToken: session.token });
    secrets.push(String(body.hash));
    const query = new URLSearchParams(
      Object.entries(body).map(([key, value]): [string, string] => [key, String(value)]),
    );
    const answer = await fetch(`${api.baseUrl}/betSlip?${query}`);
    expect(answer.status).toBe(200);
    const slip = await eventually(
      async () =>
        otlp.spans.find(
          (span) =>
            span.service === API_SERVICE && span.kind === SERVER && /betSlip/.test(JSON.stringify(span.attributes)),
        ),
      { timeoutMs: 15_000, what: 'the GET /betSlip server span' },
    );
    expect(JSON.stringify(slip.attributes)).not.toContain('?');

    expect(otlp.spans.length).toBeGreaterThan(20);
    const leaks: string[] = [];
    for (const span of otlp.spans) {
      for (const [key, value] of Object.entries(span.attributes)) {
        const text = String(value);
        if (/secret|hash|signature|token|authorization|password|player/i.test(key) && typeof value !== 'number') {
          leaks.push(`${span.name}: key ${key}`);
        }
        for (const secret of secrets) if (text.includes(secret)) leaks.push(`${span.name}: ${key} holds a secret`);
      }
      for (const secret of secrets) if (span.name.includes(secret)) leaks.push(`span name ${span.name}`);
    }
    expect(leaks).toEqual([]);
  });

  it("BullMQ's bookkeeping (stalled checks, lock renewals, pauses, closes) starts no trace of its own", async () => {
    // The worker checked for stalled jobs as it started and renewed its jobs' locks while they ran.
    expect(otlp.spans.length).toBeGreaterThan(20);
    const bookkeeping = otlp.spans.filter((span) => span.kind === INTERNAL && span.parentSpanId === '');
    expect(bookkeeping.filter((span) => span.links.length === 0).map((span) => span.name)).toEqual([]);
    expect(otlp.spans.filter((span) => /^(startStalledCheckTimer|moveStalledJobsToWait) /.test(span.name))).toEqual([]);
  });

  it('log lines written inside a span carry its trace_id and span_id', async () => {
    const traced = worker
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"trace_id"'));
    expect(traced.length).toBeGreaterThan(0);
    const line = JSON.parse(traced[0] as string) as { trace_id: string; span_id: string };
    expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(otlp.spans.some((span) => span.traceId === line.trace_id)).toBe(true);
  });

  it("the API's access line of a sampled request carries its server span's ids", async () => {
    const lines = api
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"msg":"request"') && line.includes('"trace_id"'));
    expect(lines.length).toBeGreaterThan(0);
    const line = JSON.parse(lines[0] as string) as { trace_id: string; span_id: string; route: string };
    const server = await eventually(async () => otlp.spans.find((span) => span.spanId === line.span_id), {
      timeoutMs: 10_000,
      what: 'the server span named by an access line',
    });
    expect(server).toMatchObject({ service: API_SERVICE, kind: SERVER, traceId: line.trace_id });
    expect(server.attributes['http.route']).toBe(line.route);
  });

  it("the worker's /metrics: the webhooks queue in gateway_queue_jobs, attempts timed by outcome, pending by merchant", async () => {
    const metrics = await (await fetch(`${worker.baseUrl}/metrics`)).text();
    // The value of the series of `name` carrying every one of `labels`, whatever their order.
    const value = (name: string, labels: string[]) => {
      const line = metrics
        .split('\n')
        .find((entry) => entry.startsWith(`${name}{`) && labels.every((label) => entry.includes(label)));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    expect(value('gateway_queue_jobs', ['queue="webhooks"', 'state="completed"'])).toBeGreaterThanOrEqual(2);
    expect(value('gateway_queue_jobs', ['queue="webhooks"', 'state="waiting"'])).toBe(0);
    expect(value('gateway_webhook_attempt_duration_seconds_count', ['outcome="delivered"'])).toBeGreaterThanOrEqual(2);
    expect(value('gateway_webhook_pending', ['merchant="other"'])).toBe(0);
  });
});
