import { createHash } from 'node:crypto';
import type { SSEStreamingApi } from 'hono/streaming';
import type { PublicJobStatus } from '../../../shared/jobs/job-status-schema.js';
import { isFinished, toPublicStatus } from '../../../shared/jobs/public-status.js';
import type { JobSubscription } from './job-subscription.js';

/**
 * An event's id names the status it carries (a digest of its JSON): a client that reconnects with
 * `Last-Event-ID` is sent the job's status only if it differs from the one it has, on whichever API
 * process it reaches. The final event is sent whatever the id: a reconnect after the end gets it at once.
 */
function jobEventId(status: PublicJobStatus): string {
  return createHash('sha256').update(JSON.stringify(status)).digest('base64url').slice(0, 22);
}

export interface JobEventStreamSettings {
  /** The `Last-Event-ID` the client sent, if any. */
  lastEventId: string | undefined;
  heartbeatMs: number;
}

/**
 * Writes one job's events until its end: `progress` (the public job status) when it changed, at most once
 * per `progressIntervalMs`; the final event named by the end state (`completed`, `failed`,
 * `cancelled`); a comment line when nothing was written for `heartbeatMs`. Each write waits for the
 * client to take the previous one (backpressure); the status meanwhile is only the latest one.
 */
export async function writeJobEvents(
  stream: SSEStreamingApi,
  subscription: JobSubscription,
  settings: JobEventStreamSettings,
): Promise<void> {
  stream.onAbort(() => subscription.end());
  let sentId = settings.lastEventId;
  let lastProgressAt = Number.NEGATIVE_INFINITY;
  let lastWriteAt = Date.now();
  try {
    while (!subscription.closed && !stream.aborted) {
      const seen = subscription.version;
      const status = toPublicStatus(subscription.status);
      const id = jobEventId(status);
      if (isFinished(status.state)) {
        await stream.writeSSE({ event: status.state, id, data: JSON.stringify(status) });
        return;
      }
      const now = Date.now();
      let waitMs = lastWriteAt + settings.heartbeatMs - now;
      if (id !== sentId) {
        const dueAt = lastProgressAt + subscription.progressIntervalMs;
        if (now >= dueAt) {
          await stream.writeSSE({ event: 'progress', id, data: JSON.stringify(status) });
          sentId = id;
          lastProgressAt = now;
          lastWriteAt = Date.now();
          continue;
        }
        waitMs = Math.min(waitMs, dueAt - now);
      }
      if (waitMs <= 0) {
        await stream.write(': keep-alive\n\n');
        lastWriteAt = Date.now();
        continue;
      }
      await subscription.waitForChange(seen, waitMs);
    }
  } finally {
    subscription.end();
  }
}
