import { DelayedError, type Job, WaitingChildrenError } from 'bullmq';
import type { JobName } from '../shared/queue/job-catalogue.js';
import { inSpan, linksTo, type SpanOptions, type TraceCarrier } from '../shared/telemetry/trace-context.js';

type TracedData = TraceCarrier & {
  merchantId?: string;
  rootJobId?: string;
  requests?: TraceCarrier[];
};

/**
 * Where a job's span sits. A bulk job is a child of its request's enqueue span and a part a child of
 * its parent job's span (each carries that context in its data). A batch of single cancels serves
 * many requests, each its own trace: its span starts a trace of its own, linked to every one of them.
 */
function jobSpanOptions(job: Job): SpanOptions {
  const data = (job.data ?? {}) as TracedData;
  const attributes = {
    'job.id': job.id ?? '',
    'job.kind': job.name,
    'job.attempt': job.attemptsMade + 1,
    ...(data.merchantId === undefined ? {} : { 'merchant.id': data.merchantId }),
    ...(data.rootJobId === undefined ? {} : { 'job.root_id': data.rootJobId }),
  };
  if ((job.name as JobName) === 'cancelBatch') {
    const requests = data.requests ?? [];
    return {
      kind: 'consumer',
      root: true,
      links: linksTo(requests),
      attributes: { ...attributes, 'job.requests': requests.length },
    };
  }
  return { kind: 'consumer', parent: data, attributes };
}

/** A split job parking until its parts finish, or a job put back during an outage: not a failure. */
const handedBack = (error: unknown) => error instanceof WaitingChildrenError || error instanceof DelayedError;

/** Runs one attempt of a job in its span; the counts it returns are added to the span. */
export function traceJob<T>(job: Job, run: () => Promise<T>): Promise<T> {
  return inSpan(`job ${job.name}`, { ...jobSpanOptions(job), notFailures: handedBack }, async (span) => {
    const result = await run();
    if (result !== null && typeof result === 'object') {
      for (const [key, value] of Object.entries(result)) {
        if (typeof value === 'number') span.setAttribute(`job.result.${key}`, value);
      }
    }
    return result;
  });
}
