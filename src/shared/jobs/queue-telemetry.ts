import type { Job } from 'bullmq';
import { BullMQOtel } from 'bullmq-otel';
import { tracingEnabled } from '../telemetry/trace-context.js';

/**
 * BullMQ's own OpenTelemetry integration, given to every Queue and Worker (`telemetry`). With it each
 * `add` is a producer span (`add <queue>.<job>`) whose context the job carries (`opts.telemetry.metadata`),
 * and each run of a job a consumer span (`process <queue>`), its child, in which the processor runs.
 * Undefined with tracing off: BullMQ then makes no span and stores no metadata with a job.
 */
export type QueueTelemetry = BullMQOtel | undefined;

export function queueTelemetry(): QueueTelemetry {
  return tracingEnabled() ? new BullMQOtel({ tracerName: 'merchant-rewards-gateway' }) : undefined;
}

/**
 * Runs `work` in the trace context a job carries (that of its `add` span), for steps that run on a
 * worker's events rather than inside the job's own `process` span (a job failed as stalled, say).
 */
export function inJobTrace<T>(telemetry: QueueTelemetry, job: Job, work: () => T): T {
  const metadata = job.opts.telemetry?.metadata;
  if (telemetry === undefined || metadata === undefined) return work();
  const contexts = telemetry.contextManager;
  return contexts.with(contexts.fromMetadata(contexts.active(), metadata), work);
}
