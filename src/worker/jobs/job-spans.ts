import { DelayedError, type Job, WaitingChildrenError } from 'bullmq';
import type { JobName } from '../../shared/jobs/job-catalogue.js';
import {
  annotateActiveSpan,
  linkActiveSpan,
  markActiveSpanFailed,
  type TraceCarrier,
} from '../../shared/telemetry/trace-context.js';

type TracedData = {
  merchantId?: string;
  rootJobId?: string;
  requests?: TraceCarrier[];
};

/**
 * The service's own attributes on the span BullMQ runs a job in (`process <queue>`, a child of the span
 * that added it: shared/queue/queue-telemetry.ts). A batch of single cancels serves many requests, each
 * its own trace: its span links to every one of them.
 */
function describeJobSpan(job: Job): void {
  const data = (job.data ?? {}) as TracedData;
  annotateActiveSpan({
    'job.id': job.id ?? '',
    'job.kind': job.name,
    'job.attempt': job.attemptsMade + 1,
    ...(data.merchantId === undefined ? {} : { 'merchant.id': data.merchantId }),
    ...(data.rootJobId === undefined ? {} : { 'job.root_id': data.rootJobId }),
  });
  if ((job.name as JobName) === 'cancelBatch') {
    const requests = data.requests ?? [];
    annotateActiveSpan({ 'job.requests': requests.length });
    linkActiveSpan(requests);
  }
}

/** A split job parking until its parts finish, or a job put back during an outage: not a failure. */
const handedBack = (error: unknown) => error instanceof WaitingChildrenError || error instanceof DelayedError;

/** Runs one attempt of a job in BullMQ's span of it; the counts it returns are added to the span. */
export async function traceJob<T>(job: Job, run: () => Promise<T>): Promise<T> {
  describeJobSpan(job);
  try {
    const result = await run();
    if (result !== null && typeof result === 'object') {
      for (const [key, value] of Object.entries(result)) {
        if (typeof value === 'number') annotateActiveSpan({ [`job.result.${key}`]: value });
      }
    }
    return result;
  } catch (error) {
    if (!handedBack(error)) markActiveSpanFailed(error);
    throw error;
  }
}
