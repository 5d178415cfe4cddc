import type { MerchantCredentials } from './signing.js';
import { signedBody } from './signing.js';

/** One Server-Sent Event as a client reads it (a comment line is `{comment}`). */
export interface ReadEvent {
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
  /** When it was read (ms since the epoch). */
  at: number;
}

export interface OpenEventStream {
  response: Response;
  /** The next event or comment, or null once the stream ended; fails after `timeoutMs`. */
  next(timeoutMs?: number): Promise<ReadEvent | null>;
  /** Events (not comments) until the stream ends. */
  rest(timeoutMs?: number): Promise<ReadEvent[]>;
  close(): Promise<void>;
}

/** The query of GET jobs/events, signed by `merchant` (at `timestamp`, default now). */
export function jobEventsQuery(merchant: MerchantCredentials, jobId: string, timestamp = Date.now()): string {
  const fields = signedBody(merchant, { jobId }, timestamp);
  return new URLSearchParams(
    Object.entries(fields).map(([key, value]): [string, string] => [key, `${value}`]),
  ).toString();
}

/**
 * Opens an event stream with fetch and parses it as the EventSource standard does (fields of a block
 * up to a blank line; `:` starts a comment), so a test reads exactly what a browser would.
 */
export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<OpenEventStream> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  // A refused stream keeps its body for the test to read (its JSON error).
  const reader = response.ok ? response.body?.getReader() : undefined;
  const decoder = new TextDecoder();
  const queue: ReadEvent[] = [];
  let buffer = '';
  let ended = !reader;
  let failure: unknown;
  let arrived: (() => void) | null = null;
  const wake = () => {
    arrived?.();
    arrived = null;
  };

  // Read as the bytes arrive (an event's `at` is its arrival, not when the test asks for it).
  void (async () => {
    try {
      for (;;) {
        const chunk = await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
        if (chunk.done) break;
        buffer += decoder.decode(chunk.value, { stream: true });
        let blank = buffer.indexOf('\n\n');
        while (blank >= 0) {
          queue.push(parseBlock(buffer.slice(0, blank)));
          buffer = buffer.slice(blank + 2);
          blank = buffer.indexOf('\n\n');
        }
        wake();
      }
    } catch (error) {
      if (!abort.signal.aborted) failure = error;
    } finally {
      ended = true;
      wake();
    }
  })();

  async function fill(deadline: number): Promise<void> {
    while (queue.length === 0 && !ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no event in time');
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        arrived = resolve;
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
    if (queue.length === 0 && failure) throw failure;
  }

  return {
    response,
    async next(timeoutMs = 10_000) {
      await fill(Date.now() + timeoutMs);
      return queue.shift() ?? null;
    },
    async rest(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      const events: ReadEvent[] = [];
      for (;;) {
        await fill(deadline);
        const event = queue.shift();
        if (!event) return events;
        if (event.comment === undefined) events.push(event);
      }
    },
    async close() {
      abort.abort();
      await reader?.cancel().catch(() => {});
    },
  };
}

function parseBlock(block: string): ReadEvent {
  const event: ReadEvent = { at: Date.now() };
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) event.comment = line.slice(1).trim();
    else {
      const colon = line.indexOf(':');
      const field = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`;
      else if (field === 'event' || field === 'id') event[field] = value;
    }
  }
  return event;
}
