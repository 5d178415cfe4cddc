import { createHash } from 'node:crypto';
import type { ReportCounts, ReportOutcome } from './job-report.repository.js';

/** A run of whole report lines as NDJSON text, with how many of each outcome it holds. */
export interface ReportText {
  texts: readonly string[];
  counts: ReportCounts;
}

/** What the final line says besides the counts and the checksum, known before the first line. */
type ReportHeading = Record<string, unknown>;

export interface ReportStreamOptions {
  /** The lines, a batch at a time: the next batch is read only when the client has taken the last. */
  batches: AsyncGenerator<ReportText>;
  heading: ReportHeading;
  /** Called once: the body ended (`done`), the client went away (`cancelled`), or a read failed. */
  onEnd: (how: 'done' | 'cancelled' | 'failed', error?: unknown) => void;
}

/**
 * The report as NDJSON text, pulled: a batch is read from Postgres only when the HTTP layer asks for
 * more, which it does only once the socket has taken the previous one (the node server waits for
 * `drain`), so a slow client holds one batch in memory, not the report. The last line is
 * `{"summary":{…}}` with the lines' counts by outcome and the SHA-256 (hex) of every byte before that
 * line, so a client checks the body it stored by hashing it up to its last line. A read that fails
 * mid-way errors the stream: the client gets a body without its summary line, which it must treat as
 * incomplete.
 *
 * The chunks stay strings, as Postgres gave them: Node's HTTP response writes a string to the socket
 * without a JavaScript buffer of its own, whereas encoding each chunk first made one ArrayBuffer per
 * chunk outside V8's heap, freed only by a later collection: a 1,000,000-line download at full speed
 * grew the API by ~100 MiB that way (bench/job-report-memory.ts). gzip encodes on its way in.
 */
export function ndjsonReportStream({ batches, heading, onEnd }: ReportStreamOptions): ReadableStream<string> {
  const hash = createHash('sha256');
  const counts: ReportCounts = { cancelled: 0, alreadyCancelled: 0, notCancellable: 0, notFound: 0 };
  let lines = 0;
  let ended = false;
  const end = (how: 'done' | 'cancelled' | 'failed', error?: unknown) => {
    if (ended) return;
    ended = true;
    onEnd(how, error);
  };

  return new ReadableStream<string>(
    {
      async pull(controller) {
        try {
          // An empty batch enqueues nothing, and a pull that enqueues nothing is not called again: read on.
          let next = await batches.next();
          while (!next.done && next.value.texts.length === 0) next = await batches.next();
          if (next.done) {
            const summary = { ...heading, lines, ...counts, sha256: hash.digest('hex') };
            controller.enqueue(`${JSON.stringify({ summary })}\n`);
            controller.close();
            end('done');
            return;
          }
          for (const outcome of Object.keys(counts) as ReportOutcome[]) {
            counts[outcome] += next.value.counts[outcome];
            lines += next.value.counts[outcome];
          }
          for (const text of next.value.texts) {
            hash.update(text, 'utf8');
            controller.enqueue(text);
          }
        } catch (error) {
          controller.error(error);
          end('failed', error);
        }
      },
      async cancel() {
        end('cancelled');
        await batches.return(undefined);
      },
    },
    // Nothing read ahead: the first batch is read when the server asks for the first bytes.
    { highWaterMark: 0 },
  );
}

/** The report as sent: its text as it is, or gzip of its UTF-8 bytes. */
export function encodedReport(
  report: ReadableStream<string>,
  gzip: boolean,
): ReadableStream<string> | ReadableStream<Uint8Array> {
  return gzip ? report.pipeThrough(new TextEncoderStream()).pipeThrough(new CompressionStream('gzip')) : report;
}

/** Whether the request's Accept-Encoding takes gzip (RFC 9110: a `q=0` refuses it). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  return acceptEncoding.split(',').some((entry) => {
    const [coding, ...parameters] = entry.trim().toLowerCase().split(';');
    if (coding?.trim() !== 'gzip' && coding?.trim() !== 'x-gzip') return false;
    const q = parameters.map((parameter) => parameter.trim()).find((parameter) => parameter.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}
