import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { AppError } from '../../../shared/errors/errors.js';
import type { AppEnv } from '../../context.js';
import { writeJobEvents } from './job-event-stream.js';

/**
 * One job of the merchant's as Server-Sent Events, from this process's job event hub: for the signed
 * API (jobs/events) and the portal alike. 404 for a job that is not the merchant's; past the bounds of
 * streams open at once, 429 (the hub's).
 */
export async function jobEventsResponse(c: Context<AppEnv>, merchantId: string, jobId: string): Promise<Response> {
  const { jobEvents, config } = c.get('deps');
  const subscription = await jobEvents.subscribe(jobId, merchantId);
  // Another merchant's job is as unknown as a job that never existed.
  if (!subscription) throw new AppError('NOT_FOUND', 'Job not found');
  c.set('jobId', jobId);
  // No buffering by a proxy that honours it (nginx): each event reaches the client when written.
  c.header('X-Accel-Buffering', 'no');
  const settings = { lastEventId: c.req.header('last-event-id'), heartbeatMs: config.JOB_EVENTS_HEARTBEAT_MS };
  return streamSSE(c, (stream) => writeJobEvents(stream, subscription, settings));
}
