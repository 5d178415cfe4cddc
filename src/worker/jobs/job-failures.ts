import { UnrecoverableError } from 'bullmq';
import { ZodError } from 'zod';
import { isTransientDatabaseError } from '../../shared/db/database-errors.js';

/**
 * Decides whether a failed attempt is worth another. Transient database trouble (unreachable,
 * deadlock, serialization failure) is retried with backoff by BullMQ; a payload that does not parse,
 * or data Postgres rejects outright (SQLSTATE classes 22 and 23), fails at once.
 */
export function classifyFailure(error: unknown): Error {
  if (error instanceof UnrecoverableError) return error;
  if (error instanceof ZodError) {
    return new UnrecoverableError(`malformed job payload: ${error.issues[0]?.message ?? 'invalid'}`);
  }
  if (isTransientDatabaseError(error)) return error as Error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'))) {
    return new UnrecoverableError(`rejected by the database (${code}): ${(error as Error).message}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * A job put back because Postgres is away waits at least this long, plus up to OUTAGE_DELAY_SPREAD_MS:
 * short, so it runs within a second or two of Postgres's return (the gate holds the workers while paused,
 * so it costs nothing meanwhile), and spread so that the jobs put back together do not all return at once.
 */
const OUTAGE_DELAY_MIN_MS = 1_000;
const OUTAGE_DELAY_SPREAD_MS = 1_000;

/** How long a job (or a webhook delivery) put back because Postgres is away waits before it runs again: 1–2 s. */
export function outageDelayMs(): number {
  return OUTAGE_DELAY_MIN_MS + Math.floor(Math.random() * OUTAGE_DELAY_SPREAD_MS);
}
