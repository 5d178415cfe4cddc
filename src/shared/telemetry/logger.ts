import { type DestinationStream, type Logger, pino } from 'pino';
import { activeTraceFields, tracingEnabled } from './trace-context.js';

export type { Logger };

/**
 * Field names that must never be written out. Code does not log request bodies; a stray object with
 * one of these keys is censored rather than leaked. Explicit paths only: wildcard paths make every
 * log call walk the object, and the access log runs on every request.
 */
const secretPaths = [
  'hash',
  'secretKey',
  'secret_key',
  'previous_secret_key',
  'authToken',
  'token',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'body.hash',
  'body.secretKey',
  'body.authToken',
];

/**
 * Standard output, written asynchronously: a line is handed to the write in flight, or starts one, so
 * lines that come while a write is under way leave together in the next one. Writing each line
 * synchronously (pino's default) cost a system call per line: with a line per request and one per
 * job, the largest single cost of a worker applying single cancels (bench/README.md). Nothing waits
 * for a buffer to fill, and pino writes what is left when the process exits; only a process killed
 * outright (SIGKILL) can lose the lines of its last write or two.
 */
function standardOutput(): DestinationStream {
  return pino.destination({ dest: 1, sync: false });
}

/**
 * pino's ISO timestamp, formatted once per millisecond: a busy API writes several lines in the same
 * millisecond, and formatting a `Date` for each was a visible share of its CPU serving /healthz (~3 %,
 * measured 2026-11-23). The text is the
 * same as `pino.stdTimeFunctions.isoTime` gives.
 */
function isoTimeOncePerMillisecond(): () => string {
  let formattedAt = -1;
  let text = '';
  return () => {
    const now = Date.now();
    if (now !== formattedAt) {
      formattedAt = now;
      text = `,"time":"${new Date(now).toISOString()}"`;
    }
    return text;
  };
}

export function createLogger(options: { level: string; name: string }, destination?: DestinationStream): Logger {
  return pino(
    {
      level: options.level,
      base: { service: options.name },
      redact: { paths: secretPaths, censor: '[redacted]' },
      timestamp: isoTimeOncePerMillisecond(),
      // trace_id and span_id on every line written inside a span; with tracing off, no call per line.
      ...(tracingEnabled() ? { mixin: activeTraceFields } : {}),
    },
    destination ?? standardOutput(),
  );
}
