import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { DEVELOPMENT_KEY_RING_FILE, developmentKeyRing } from '../secrets/development-key-ring.js';
import type { AdminOperator } from './admin-operators.js';
import { httpSettings } from './settings/http.js';
import { jobSettings } from './settings/jobs.js';
import { queueAndDatabaseSettings } from './settings/queue-and-database.js';
import { positiveInt } from './settings/setting-types.js';
import { storeSettings } from './settings/stores.js';
import { webhookAndRetentionSettings } from './settings/webhooks-and-retention.js';

export { DEFAULT_BULK_MAX_ITEMS } from './settings/setting-defaults.js';

/**
 * The only place that reads the environment. Every process parses it once at start-up; a bad value
 * stops the process with a message naming the variable (see `loadConfigOrExit`).
 */

export const configSchema = z
  .object({
    ...storeSettings,
    ...httpSettings,
    ...queueAndDatabaseSettings,
    ...jobSettings,
    ...webhookAndRetentionSettings,
  })
  .superRefine((config, context) => {
    if (config.HTTP_HEADERS_TIMEOUT_MS > config.HTTP_REQUEST_TIMEOUT_MS) {
      context.addIssue({
        code: 'custom',
        path: ['HTTP_HEADERS_TIMEOUT_MS'],
        message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS',
      });
    }
    const outside = config.WORKER_SHARDS?.filter((shard) => shard >= config.QUEUE_SHARDS) ?? [];
    if (outside.length > 0) {
      context.addIssue({
        code: 'custom',
        path: ['WORKER_SHARDS'],
        message: `shards are numbered 0 to ${config.QUEUE_SHARDS - 1} (QUEUE_SHARDS=${config.QUEUE_SHARDS}): ${outside.join(', ')}`,
      });
    }
    if (config.REDIS_URL === undefined && config.REDIS_CLUSTER_NODES === undefined) {
      context.addIssue({ code: 'custom', path: ['REDIS_URL'], message: 'required (or set REDIS_CLUSTER_NODES)' });
    }
    if (config.ADMIN_TOKEN !== undefined && config.ADMIN_TOKENS.some((operator) => operator.name === 'admin')) {
      context.addIssue({
        code: 'custom',
        path: ['ADMIN_TOKEN'],
        message: 'ADMIN_TOKENS already names an operator "admin": set one or the other',
      });
    }
    if (config.ADMIN_PORT !== 0 && config.ADMIN_PORT === config.PORT) {
      context.addIssue({ code: 'custom', path: ['ADMIN_PORT'], message: 'must differ from PORT' });
    }
    if (config.UNAUTHENTICATED_BODY_BYTES_MAX < 2 * config.BODY_LIMIT_BYTES) {
      context.addIssue({
        code: 'custom',
        path: ['UNAUTHENTICATED_BODY_BYTES_MAX'],
        message: `must be at least twice BODY_LIMIT_BYTES (${2 * config.BODY_LIMIT_BYTES}): bulk bodies may hold half of it`,
      });
    }
    if (config.NODE_ENV === 'production' && config.WEBHOOK_ALLOW_PRIVATE) {
      context.addIssue({
        code: 'custom',
        path: ['WEBHOOK_ALLOW_PRIVATE'],
        message:
          "must not be true with NODE_ENV=production: merchants' webhooks could then reach the service's own network",
      });
    }
    if (config.NODE_ENV === 'production' && config.SECRETS_KEYS === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['SECRETS_KEYS'],
        message:
          'required with NODE_ENV=production: the key ring that seals secrets at rest, kid:base64key,... (docs/operations.md)',
      });
    }
  });

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Every operator of the admin plane: ADMIN_TOKEN as `admin`, then ADMIN_TOKENS. Empty: the admin plane is closed. */
export function adminOperators(config: Pick<Config, 'ADMIN_TOKEN' | 'ADMIN_TOKENS'>): AdminOperator[] {
  const single = config.ADMIN_TOKEN === undefined ? [] : [{ name: 'admin', token: config.ADMIN_TOKEN }];
  return [...single, ...config.ADMIN_TOKENS];
}

/** The merchants' listener's origin as merchants reach it: PUBLIC_BASE_URL, or `http://localhost:$PORT`. */
export function publicBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>): string {
  return config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/**
 * Loads `.env` from the working directory into the process environment when the file exists.
 * Variables already set win over the file. Tests (NODE_ENV=test) never read it, so a developer's
 * `.env` cannot change what a test process sees.
 */
export function loadDotEnv(env: Record<string, string | undefined> = process.env, file = '.env'): void {
  if (env !== process.env || env.NODE_ENV === 'test') return;
  const path = resolve(file);
  if (existsSync(path)) process.loadEnvFile(path);
}

/**
 * On a development machine (NODE_ENV unset or `development`) with no SECRETS_KEYS, the ring kept in
 * .secrets-keys.dev (made on first use), so that secrets sealed by one run open in the next. Never in
 * production (start-up refuses) nor in tests (each run brings its own ring).
 */
export function fillDevelopmentKeyRing(env: Record<string, string | undefined>): void {
  if ((env.NODE_ENV ?? 'development') !== 'development' || env.SECRETS_KEYS) return;
  env.SECRETS_KEYS = developmentKeyRing(DEVELOPMENT_KEY_RING_FILE);
}

/**
 * Tracing (docs/operations.md, "Tracing"): only the standard OpenTelemetry variables, read by the
 * preload module (telemetry/telemetry.preload.ts) before anything else is loaded, so apart from the
 * rest of the configuration. Tracing is on when an OTLP endpoint is set and OTEL_SDK_DISABLED is not
 * true; otherwise no SDK is loaded at all.
 */
const unsetWhenEmpty = (value: unknown) => (value === '' ? undefined : value);
const otlpProtocol = z.preprocess(unsetWhenEmpty, z.enum(['http/protobuf', 'http/json']).optional());
const samplerNames = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

export const telemetrySchema = z
  .object({
    OTEL_SDK_DISABLED: z.preprocess(
      (value) => (typeof value === 'string' ? value.trim().toLowerCase() === 'true' : false),
      z.boolean(),
    ),
    OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess(unsetWhenEmpty, z.url({ protocol: /^https?$/ }).optional()),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.preprocess(unsetWhenEmpty, z.url({ protocol: /^https?$/ }).optional()),
    /** grpc is refused (this service ships the two HTTP exporters only); http/protobuf is the standard's default. */
    OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
    OTEL_SERVICE_NAME: z.preprocess(unsetWhenEmpty, z.string().optional()),
    OTEL_TRACES_SAMPLER: z.preprocess(unsetWhenEmpty, z.enum(samplerNames).default('parentbased_always_on')),
    /** The ratio of the two *traceidratio samplers, 0 to 1 (1 when unset). */
    OTEL_TRACES_SAMPLER_ARG: z.preprocess(unsetWhenEmpty, z.coerce.number().min(0).max(1).default(1)),
    /** Milliseconds between two exports of the spans gathered meanwhile (the standard's default, 5,000). */
    OTEL_BSP_SCHEDULE_DELAY: z.preprocess(unsetWhenEmpty, positiveInt(5_000)),
    /** Spans held for export at most; past it new ones are dropped (the standard's default, 2,048). */
    OTEL_BSP_MAX_QUEUE_SIZE: z.preprocess(unsetWhenEmpty, positiveInt(2_048)),
    /** Spans sent in one export at most, and the count that sends a batch before its delay (default 512). */
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: z.preprocess(unsetWhenEmpty, positiveInt(512)),
    /** Milliseconds one export may take before it is given up (the standard's default, 30,000). */
    OTEL_BSP_EXPORT_TIMEOUT: z.preprocess(unsetWhenEmpty, positiveInt(30_000)),
  })
  .superRefine((otel, context) => {
    // The SDK would shrink such a batch to the queue with a warning; refused here, like any other wrong setting.
    if (otel.OTEL_BSP_MAX_EXPORT_BATCH_SIZE > otel.OTEL_BSP_MAX_QUEUE_SIZE) {
      context.addIssue({
        code: 'custom',
        path: ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE'],
        message:
          'must not be larger than OTEL_BSP_MAX_QUEUE_SIZE ' +
          `(${otel.OTEL_BSP_MAX_EXPORT_BATCH_SIZE} > ${otel.OTEL_BSP_MAX_QUEUE_SIZE})`,
      });
    }
  });

export interface TelemetrySettings {
  /** Where spans go (the traces endpoint itself), or null when tracing is off. */
  tracesUrl: string | null;
  protocol: 'http/protobuf' | 'http/json';
  serviceName: string | undefined;
  sampler: (typeof samplerNames)[number];
  samplerRatio: number;
  exportDelayMs: number;
  exportQueueSize: number;
  exportBatchSize: number;
  exportTimeoutMs: number;
}

/** The tracing settings, or a ConfigError naming the variable. */
export function loadTelemetrySettings(env: Record<string, string | undefined> = process.env): TelemetrySettings {
  const parsed = telemetrySchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const otel = parsed.data;
  // The standard: a signal's own endpoint is used as it is; the general one gets /v1/traces appended.
  const base = otel.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const url = otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? undefined : `${base}/v1/traces`);
  return {
    tracesUrl: otel.OTEL_SDK_DISABLED || url === undefined ? null : url,
    protocol: otel.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? otel.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    serviceName: otel.OTEL_SERVICE_NAME,
    sampler: otel.OTEL_TRACES_SAMPLER,
    samplerRatio: otel.OTEL_TRACES_SAMPLER_ARG,
    exportDelayMs: otel.OTEL_BSP_SCHEDULE_DELAY,
    exportQueueSize: otel.OTEL_BSP_MAX_QUEUE_SIZE,
    exportBatchSize: otel.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    exportTimeoutMs: otel.OTEL_BSP_EXPORT_TIMEOUT,
  };
}

/** What `npm start` assumes when nothing is set: the default local ports and a database of its own. */
export const LOCAL_DEFAULTS = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/rewards',
  REDIS_URL: 'redis://127.0.0.1:6379',
} as const;

/**
 * The environment `npm start` runs with and hands to its child processes: `.env` loaded, the local
 * defaults filled in where a variable is unset.
 */
export function localEnvironment(env: Record<string, string | undefined> = process.env): Record<string, string> {
  loadDotEnv(env);
  fillDevelopmentKeyRing(env);
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) merged[key] = value;
  for (const [key, value] of Object.entries(LOCAL_DEFAULTS)) if (!merged[key]) merged[key] = value;
  return merged;
}

/**
 * Entry points call this: `.env` is loaded when present, and a wrong variable ends the process with
 * its name rather than a stack.
 */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    loadDotEnv(env);
    fillDevelopmentKeyRing(env);
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
