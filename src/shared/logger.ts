import { type DestinationStream, type Logger, pino } from 'pino';

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

export function createLogger(options: { level: string; name: string }, destination?: DestinationStream): Logger {
  return pino(
    {
      level: options.level,
      base: { service: options.name },
      redact: { paths: secretPaths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
