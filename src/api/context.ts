import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context as TraceContext } from '@opentelemetry/api';
import type { Config } from '../shared/config/config.js';
import type { Db } from '../shared/db/client.js';
import type { RedisConnection } from '../shared/redis/redis.js';
import type { ShardLayout } from '../shared/redis/shards.js';
import type { SecretSealer } from '../shared/secrets/secret-sealer.js';
import type { Logger } from '../shared/telemetry/logger.js';
import type { Metrics } from '../shared/telemetry/metrics.js';
import type { WebhookNotifier } from '../shared/webhooks/webhook-notifier.js';
import type { AuthenticatedMerchant, MerchantDirectory } from './auth/merchant-directory.js';
import type { BodyBoundSignature } from './auth/signature.js';
import type { CancellationProducer } from './cancellations/producer.js';
import type { AccessLog } from './http/access-log.js';
import type { BodyBudget } from './http/body-budget.js';
import type { RequestLogger } from './http/request-logger.js';
import type { JobEventHub } from './jobs/events/job-event-hub.js';
import type { HeavyReadLimiter } from './limits/heavy-read-limiter.js';
import type { RateLimiter } from './limits/rate-limiter.js';
import type { PortalSession } from './portal/portal-sessions.repository.js';
import type { ReadRouter } from './reads/read-router.js';
import type { ReadAllCache } from './reward-configurations/read-all-cache.js';

/** Everything a request handler may use, built once by the entry point (or a test) and passed in. */
export interface ApiDeps {
  config: Config;
  /** The primary: writes, and reads that must see them (/betSlip, abort, admin). */
  db: Db;
  /** Sends lag-tolerant reads to the replica when there is one that keeps up (reads/read-router.ts). */
  reads: ReadRouter;
  logger: Logger;
  metrics: Metrics;
  /** The line and the metrics observation of every answered request (http/access-log.ts). */
  accessLog: AccessLog;
  producer: CancellationProducer;
  /** Which queue shard holds each merchant's keys and each job (shards.ts). */
  shards: ShardLayout;
  /** The API's own Redis connection, for readiness checks and queue statistics. */
  redis: RedisConnection;
  /**
   * The connection for the small per-request commands (a signature's URL mark, the rate count), auto-
   * pipelined: the commands of every request read in one turn of the event loop leave in one write.
   */
  requestRedis: RedisConnection;
  merchants: MerchantDirectory;
  /** Seals the merchant and webhook secrets the admin API stores (the deployment's key ring). */
  secrets: SecretSealer;
  readAllCache: ReadAllCache;
  /** Tells a merchant's webhook about a job the API finished itself (an abort of a queued job). */
  webhooks: WebhookNotifier;
  /** Per-merchant request rate, counted in Redis (normally on `requestRedis`). */
  rateLimiter: RateLimiter;
  /** Per-merchant cap of dry runs and job-rewards pages running at once in this process. */
  heavyReads: HeavyReadLimiter;
  /** The job event streams of this process, fed by one subscription to the queues' events. */
  jobEvents: JobEventHub;
  /** The bytes of bodies being read before authentication, bounded across this process's requests. */
  bodyBudget: BodyBudget;
}

/**
 * What middleware hands on to handlers, read with `c.get(name)`. Not `c.var.name`: hono builds a new
 * object of every variable each time `c.var` is read, which adds up at thousands of requests a second.
 */
export interface AppEnv {
  Variables: {
    deps: ApiDeps;
    requestId: string;
    logger: RequestLogger;
    /** The admin operator's name, set by the admin authentication (admin API and dashboard). */
    operator?: string;
    /** Set by the merchant authentication middleware. */
    merchant: AuthenticatedMerchant;
    /** Set by the portal's session gate (portal/portal-session.middleware.ts): the merchant comes from it. */
    portalSession?: PortalSession;
    /** The session cookie's token, for the CSRF token derived from it (portal/portal-tokens.ts). */
    portalSessionToken?: string;
    /** The request body as received (every method but GET and HEAD); see library-bypasses/request-body.ts. */
    body?: Uint8Array;
    /** That body parsed as JSON, once (library-bypasses/request-body.ts `requestJson`). */
    parsedBody?: { value: unknown };
    /** Set by the merchant authentication middleware when the request carried a verified X-Signature. */
    bodyBoundSignature?: BodyBoundSignature;
    /** Set by handlers that queue a job, for the request log line. */
    jobId?: string;
    /** The request's trace context (its server span's), when tracing is on (http/server-span.ts). */
    traceContext?: TraceContext;
  };
}

export type App = OpenAPIHono<AppEnv>;
