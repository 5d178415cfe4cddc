/**
 * Which database failures are the database being away or busy (worth a retry, 503 to a client),
 * as opposed to a bug or bad data (no retry, 500).
 */

const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection ended unexpectedly',
];

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** The database cannot be reached, or is shutting down or starting up. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = codeOf(error);
  if (code && (CONNECTION_ERROR_CODES.has(code) || code.startsWith('08') || code.startsWith('57P'))) return true;
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable);
  const message = error instanceof Error ? error.message : '';
  return CONNECTION_MESSAGES.some((fragment) => message.includes(fragment));
}

/**
 * A statement Postgres stopped because of a pool's timeouts (client.ts): cancelled past
 * `statement_timeout` (57014, query_canceled) or refused a lock within `lock_timeout` (55P03). The
 * database is up but busy; asking again later is the answer (503 to a client).
 */
export function isDatabaseBusy(error: unknown): boolean {
  const code = codeOf(error);
  return code === '57014' || code === '55P03';
}

/**
 * A hot standby cancelled the statement because replaying the primary's changes needed what it read
 * ("canceling statement due to conflict with recovery", 40001): asked again elsewhere, it answers.
 */
export function isRecoveryConflict(error: unknown): boolean {
  return codeOf(error) === '40001';
}

/** A lock not granted within `lock_timeout` (55P03). */
export function isLockTimeout(error: unknown): boolean {
  return codeOf(error) === '55P03';
}

/**
 * Worth retrying without using an attempt: unreachable, deadlock (40P01), serialization failure
 * (40001), lock timeout (55P03), too many connections. A statement cancelled past its timeout (57014)
 * is not here: run again at once it would likely take as long, so it uses an attempt (with backoff).
 */
export function isTransientDatabaseError(error: unknown): boolean {
  const code = codeOf(error);
  return (
    isDatabaseUnavailable(error) ||
    code === '40001' ||
    code === '40P01' ||
    code === '55P03' ||
    code === '53300' ||
    code === '53400'
  );
}

/** A Postgres unique violation (23505) of the named constraint or unique index. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  return codeOf(error) === '23505' && (error as { constraint?: unknown }).constraint === constraint;
}
