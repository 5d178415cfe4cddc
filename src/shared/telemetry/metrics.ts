import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Prometheus metrics of one process. Each entry point builds one `Metrics` (its own registry, so
 * tests can build several in one process) and serves `registry.metrics()` at /metrics.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpRequestDuration = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time from request to response, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly queueJobs = new Gauge({
    name: 'gateway_queue_jobs',
    help: 'Jobs in each queue (of each queue shard) by state, read from Redis at scrape time.',
    labelNames: ['queue', 'shard', 'state'] as const,
    registers: [this.registry],
  });

  readonly queueOldestWaitingAge = new Gauge({
    name: 'gateway_queue_oldest_waiting_age_seconds',
    help: 'Age of the job next in line in each queue (of each queue shard, since it was added), 0 when none waits; read at scrape time.',
    labelNames: ['queue', 'shard'] as const,
    registers: [this.registry],
  });

  readonly unauthenticatedBodyBytes = new Gauge({
    name: 'gateway_http_unauthenticated_body_bytes',
    help: 'Bytes of request bodies being read before authentication in this API process (reserved by their declared size); new bodies are refused with 503 past UNAUTHENTICATED_BODY_BYTES_MAX.',
    registers: [this.registry],
  });

  readonly ready = new Gauge({
    name: 'gateway_ready',
    help: '1 while Postgres and Redis both answer (as /readyz), else 0; checked at each scrape and readiness probe.',
    registers: [this.registry],
  });

  readonly rewardsCancelled = new Counter({
    name: 'gateway_rewards_cancelled_total',
    help: 'Rewards moved from ACTIVE to CANCELLED, by operation.',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'gateway_job_duration_seconds',
    help: 'Time a cancellation job took to run, by operation and outcome.',
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });

  readonly batchSize = new Histogram({
    name: 'gateway_cancel_batch_size',
    help: 'Rewards (or single cancels, when coalesced) handled by one database transaction.',
    labelNames: ['operation'] as const,
    buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 20000],
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'gateway_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered (a 2xx), retried (failed, another attempt scheduled), failed (given up or refused).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  // Retention sweeper (worker processes only; src/worker/retention/).
  readonly retentionDeleted = new Counter({
    name: 'gateway_retention_deleted_total',
    help: 'Rows the retention sweeper deleted, by table.',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  readonly retentionSweeps = new Counter({
    name: 'gateway_retention_sweeps_total',
    help: 'Retention sweeps by outcome: completed, skipped (another replica holds the sweep lock), failed.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly retentionLastSweep = new Gauge({
    name: 'gateway_retention_last_sweep_timestamp_seconds',
    help: 'When this process last completed a retention sweep (Unix seconds); 0 until it has.',
    registers: [this.registry],
  });

  readonly retentionSweepDuration = new Histogram({
    name: 'gateway_retention_sweep_duration_seconds',
    help: 'Time one completed retention sweep took.',
    buckets: [0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
    registers: [this.registry],
  });

  readonly retentionStatementDuration = new Histogram({
    name: 'gateway_retention_statement_duration_seconds',
    help: 'Time one retention delete statement (its own transaction) held its locks, by table.',
    labelNames: ['table'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly webhookEventsDropped = new Counter({
    name: 'gateway_webhook_events_dropped_total',
    help: 'Webhook events given up unsent, each recorded as a dropped delivery: pending_cap (the merchant had WEBHOOK_MAX_PENDING_PER_MERCHANT pending; its oldest go) or disabled (its endpoint is disabled).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly rateLimitFallback = new Counter({
    name: 'gateway_rate_limit_fallback_total',
    help: 'Requests the API process counted in its own token bucket because Redis could not count them: reason timeout (no answer within RATE_LIMIT_TIMEOUT_MS) or error.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly webhookAttemptDuration = new Histogram({
    name: 'gateway_webhook_attempt_duration_seconds',
    help: 'Time one webhook delivery attempt took on a worker (slot, request, record), by outcome: delivered, dropped (given up: endpoint disabled or event dropped), error (failed; retried or given up by its schedule).',
    labelNames: ['outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly webhookPending = new Gauge({
    name: 'gateway_webhook_pending',
    help: 'Webhook events waiting to be delivered (queued or between retries) by merchant: the 20 with the most by id, the rest summed as merchant="other"; read from Redis at scrape time (workers).',
    labelNames: ['merchant'] as const,
    registers: [this.registry],
  });

  readonly webhooksDisabled = new Gauge({
    name: 'gateway_webhooks_disabled',
    help: 'Merchant webhook endpoints disabled after failing every delivery for WEBHOOK_DISABLE_AFTER_MS, read from Postgres at scrape time (workers).',
    registers: [this.registry],
  });

  // Read replica (API processes with DATABASE_READ_URL; src/api/reads/).
  readonly replicaLag = new Gauge({
    name: 'gateway_db_replica_lag_seconds',
    help: 'How far the read replica is behind the primary, as last measured (every READ_LAG_POLL_MS); -1 while it cannot be measured (no replica, or the primary or the replica not answering).',
    registers: [this.registry],
  });

  readonly replicaUp = new Gauge({
    name: 'gateway_db_replica_up',
    help: '1 while the read replica answered its last lag check, else 0.',
    registers: [this.registry],
  });

  readonly databaseReads = new Counter({
    name: 'gateway_db_reads_total',
    help: 'Reads routed between the Postgres pools, by the pool that answered (primary, replica) and kind (readAll, dryRun, jobStatus, jobRewards, jobUnapplied, jobReport, merchant).',
    labelNames: ['pool', 'kind'] as const,
    registers: [this.registry],
  });

  constructor(options: { collectDefaults: boolean; processName: string }) {
    this.registry.setDefaultLabels({ process: options.processName });
    if (options.collectDefaults) collectDefaultMetrics({ register: this.registry });
  }

  observeHttpRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpRequestDuration.observe(labels, seconds);
  }
}
