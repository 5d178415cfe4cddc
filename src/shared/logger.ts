import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };

/**
 * Field names that must never be written out, wherever they appear. Code does not log request
 * bodies, but a stray object with one of these keys is censored rather than leaked.
 */
const secretPaths = [
  'hash',
  'secretKey',
  'secret_key',
  'previous_secret_key',
  'authToken',
  'token',
  'authorization',
  '*.hash',
  '*.secretKey',
  '*.secret_key',
  '*.previous_secret_key',
  '*.authToken',
  '*.token',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
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
