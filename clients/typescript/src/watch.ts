import type { components } from './merchant-api.js';
import { signatureHeader, signV1 } from './signing.js';

type JobStatus = components['schemas']['JobStatus'];

/** One event of a job's stream: `progress` while it runs, then one named by its end state. */
export interface JobEvent {
  type: 'progress' | 'completed' | 'failed' | 'cancelled';
  /** What to send back as Last-Event-ID: the client does so itself when it reconnects. */
  id: string;
  status: JobStatus;
}

export const JOB_EVENTS_PATH = '/api/v1/integration/jobs/events';
const FINAL = new Set(['completed', 'failed', 'cancelled']);

/** What watching needs from the client that holds the merchant's credentials. */
export interface WatchContext {
  baseUrl: string;
  merchantId: string;
  secret: string;
  signatureVersion: 1 | 2;
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  serverNow: () => number;
  /** Consecutive failed connections before giving up. */
  maxAttempts: number;
  /** An answer the client does not retry: raised as the client's own error type. */
  refused: (status: number, body: { errorCode?: number; errorMessage?: string }, retryAfter: number | null) => Error;
}

/**
 * Follows a job's event stream (GET jobs/events) until its final event, reconnecting with Last-Event-ID
 * after a dropped connection or a 429/503 (after Retry-After): the service then sends only a status the
 * client has not seen, and the final event at once if the job ended meanwhile.
 */
export async function* watchJobEvents(context: WatchContext, jobId: string): AsyncGenerator<JobEvent> {
  let lastEventId: string | undefined;
  let failures = 0;
  for (;;) {
    const timestamp = context.serverNow();
    const query = new URLSearchParams({
      merchantId: context.merchantId,
      timestamp: String(timestamp),
      hash: signV1(context.merchantId, context.secret, timestamp),
      jobId,
    });
    const pathWithQuery = `${JOB_EVENTS_PATH}?${query}`;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    if (context.signatureVersion === 2)
      headers['x-signature'] = signatureHeader(context.secret, timestamp, 'GET', pathWithQuery, '');
    let response: Response;
    try {
      response = await context.fetch(`${context.baseUrl}${pathWithQuery}`, { headers });
    } catch (error) {
      if (++failures >= context.maxAttempts) throw error;
      await context.sleep(backoffMs(failures, null));
      continue;
    }
    if (!response.ok) {
      const retryAfter = /^\d+$/.test(response.headers.get('retry-after') ?? '')
        ? Number(response.headers.get('retry-after'))
        : null;
      const body = (await response.json().catch(() => ({}))) as { errorCode?: number; errorMessage?: string };
      const retryable = response.status === 429 || response.status === 503 || response.status >= 500;
      if (!retryable || ++failures >= context.maxAttempts) throw context.refused(response.status, body, retryAfter);
      await context.sleep(backoffMs(failures, retryAfter));
      continue;
    }
    try {
      for await (const event of readEvents(response)) {
        failures = 0;
        lastEventId = event.id;
        yield event;
        if (FINAL.has(event.type)) return;
      }
    } catch (error) {
      // The connection dropped mid-stream: reconnect below, from the last event seen.
      if (++failures >= context.maxAttempts) throw error;
    }
    await context.sleep(backoffMs(Math.max(failures, 1), null));
  }
}

/** The events of one response, parsed as the EventSource standard does (comment lines skipped). */
async function* readEvents(response: Response): AsyncGenerator<JobEvent> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, '\n');
      for (let blank = buffer.indexOf('\n\n'); blank >= 0; blank = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, blank);
        buffer = buffer.slice(blank + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line === '' || line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const name = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          fields[name] = name === 'data' && fields.data !== undefined ? `${fields.data}\n${value}` : value;
        }
        if (fields.data === undefined || fields.id === undefined) continue;
        yield { type: (fields.event ?? 'message') as JobEvent['type'], id: fields.id, status: JSON.parse(fields.data) };
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

function backoffMs(attempt: number, retryAfter: number | null): number {
  const base = retryAfter === null ? Math.min(200 * 2 ** (attempt - 1), 10_000) : retryAfter * 1_000;
  return base + Math.random() * Math.max(base / 4, 100);
}
