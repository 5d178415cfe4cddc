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

/**
 * Postgres `text` cannot hold NUL: such a value would fail the query and answer 500. A pattern (not a
 * refinement) so that the documents state it: `^[^\u0000]*$`.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the very character this rule refuses.
const NO_NUL = /^[^\u0000]*$/;
const NO_NUL_MESSAGE = 'must not contain NUL characters';

/** Merchant-chosen text stored in Postgres: no NUL. */
export const withoutNul = (schema: z.ZodString) => schema.regex(NO_NUL, NO_NUL_MESSAGE);

/**
 * Merchant-chosen identifiers: 1 to 255 characters, no NUL. zod counts characters as JSON Schema's
 * minLength/maxLength and Postgres' `length()` do (code points: an emoji is one), so the documents'
 * lengths are the ones enforced.
 */
export const identifierSchema = () => withoutNul(z.string().min(1).max(IDENTIFIER_MAX_LENGTH));

/** The largest timestamp: epoch milliseconds are read as JavaScript numbers, exact up to here. */
export const TIMESTAMP_MAX = Number.MAX_SAFE_INTEGER;

/**
 * A pattern for the decimal strings of `limit.length` digits whose value is at most `limit`: for each
 * digit of the limit above 0, the strings equal to the limit before it and smaller at it, then the
 * limit itself.
 */
function sameLengthNotAbove(limit: string): string {
  const branches: string[] = [];
  for (let index = 0; index < limit.length; index += 1) {
    const digit = Number(limit[index]);
    if (digit === 0) continue;
    const rest = limit.length - index - 1;
    const smaller = digit === 1 ? '0' : `[0-${digit - 1}]`;
    branches.push(`${limit.slice(0, index)}${smaller}${rest > 0 ? `\\d{${rest}}` : ''}`);
  }
  branches.push(limit);
  return branches.join('|');
}

const TIMESTAMP_MAX_DIGITS = String(TIMESTAMP_MAX).length;

/**
 * The string form: 1 to 16 digits (leading zeros kept: they were signed) whose value is at most
 * TIMESTAMP_MAX, as one pattern, so that the documents state exactly what is refused.
 */
const TIMESTAMP_DIGITS = new RegExp(
  `^(?:\\d{1,${TIMESTAMP_MAX_DIGITS - 1}}|${sameLengthNotAbove(String(TIMESTAMP_MAX))})$`,
);

/**
 * The signed timestamp as its digits, or null when the value is not epoch milliseconds: a JSON
 * number that is an integer from 0 to TIMESTAMP_MAX, or a string of digits whose value is one. A
 * string is kept as sent, because its digits (leading zeros included) are what the merchant signed.
 */
export function timestampDigits(value: unknown): string | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? String(value) : null;
  if (typeof value === 'string' && TIMESTAMP_DIGITS.test(value)) return value;
  return null;
}

/** The string half of the rule; alone where every value is text (the query string of GET /betSlip). */
export const timestampTextSchema = () =>
  z.string().regex(TIMESTAMP_DIGITS, `must be 1 to ${TIMESTAMP_MAX_DIGITS} digits, at most ${TIMESTAMP_MAX}`);

/** The same rule as `timestampDigits`, as a schema: a JSON integer or a string of digits. */
export const timestampSchema = () => z.union([z.number().int().min(0).max(TIMESTAMP_MAX), timestampTextSchema()]);
