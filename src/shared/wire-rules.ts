import { z } from '@hono/zod-openapi';

/**
 * The rules a value must meet on the wire, declared once: the API's request schemas, the signature
 * middleware (which reads the signed fields before any schema runs) and the job catalogue (which
 * parses what the API queued) all use these, so they cannot disagree about what is valid.
 *
 * The schemas are built by functions, each call a new schema: the API adds OpenAPI metadata with
 * `.openapi()`, which @hono/zod-openapi gives only to schemas built after it has loaded, and the
 * API entry point loads this module (through the job catalogue) before that.
 */

/** A UUID as RFC 9562 writes it, in either case: the pattern zod's `z.uuid()` checks. */
export const uuidSchema = () => z.uuid();
const UUID_PATTERN = z.regexes.uuid();

export function isUuid(text: string): boolean {
  return UUID_PATTERN.test(text);
}

/**
 * A job id as a caller sends it back (jobs/status, jobs/cancel, listings, the admin job view). The
 * service's job ids are lower-case UUIDs, which Redis keys and BullMQ compare as text: an id is
 * lower-cased where it enters, so that `6F1C…` finds, aborts and lists the job `6f1c…` does. Other text
 * is kept, to be "not found" like any unknown id.
 */
export const jobIdSchema = () => z.string().min(1).max(128).toLowerCase();

/** Longest merchant-chosen identifier (external ids, player ids, names). */
export const IDENTIFIER_MAX_LENGTH = 255;

/** Postgres `text` cannot hold NUL: such a value would fail the query and answer 500. */
export function hasNoNul(value: string): boolean {
  return !value.includes('\u0000');
}
export const NO_NUL_MESSAGE = 'must not contain NUL characters';

/** Merchant-chosen identifiers: 1 to 255 characters, no NUL. */
export const identifierSchema = () => z.string().min(1).max(IDENTIFIER_MAX_LENGTH).refine(hasNoNul, NO_NUL_MESSAGE);

/** At most 16 digits: every safe integer fits, and a longer string is refused before it is converted. */
const TIMESTAMP_DIGITS = /^\d{1,16}$/;

/**
 * The signed timestamp as its digits, or null when the value is not epoch milliseconds: a JSON
 * number that is a non-negative safe integer, or a string of digits whose value is one. A string is
 * kept as sent, because its digits (leading zeros included) are what the merchant signed.
 */
export function timestampDigits(value: unknown): string | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? String(value) : null;
  if (typeof value === 'string' && TIMESTAMP_DIGITS.test(value) && Number.isSafeInteger(Number(value))) return value;
  return null;
}

/** The string half of the rule; alone where every value is text (the query string of GET /betSlip). */
export const timestampTextSchema = () =>
  z
    .string()
    .regex(TIMESTAMP_DIGITS)
    .refine((text) => Number.isSafeInteger(Number(text)), 'must be a safe integer');

/** The same rule as `timestampDigits`, as a schema: a JSON integer or a string of digits. */
export const timestampSchema = () => z.union([z.number().int().nonnegative(), timestampTextSchema()]);
