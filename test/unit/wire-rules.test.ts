import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  identifierSchema,
  isUuid,
  jobIdSchema,
  timestampDigits,
  timestampSchema,
  timestampTextSchema,
  uuidSchema,
} from '../../src/shared/wire-rules.js';

describe('UUID rule', () => {
  it.each([
    '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b',
    '8F2A1B4E-3C5D-4E6F-8A9B-0C1D2E3F4A5B',
    '00000000-0000-4000-8000-000000000000',
  ])('accepts %s in the middleware check and the schema alike', (text) => {
    expect(isUuid(text)).toBe(true);
    expect(uuidSchema().safeParse(text).success).toBe(true);
  });

  it.each([
    '',
    'not-a-uuid',
    '8f2a1b4e3c5d4e6f8a9b0c1d2e3f4a5b',
    '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5',
    ' 8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b',
    '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b\n',
    '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4g5b',
  ])('refuses %j in the middleware check and the schema alike', (text) => {
    expect(isUuid(text)).toBe(false);
    expect(uuidSchema().safeParse(text).success).toBe(false);
  });
});

describe('job id rule', () => {
  it('reads a job id in any case as the lower-case id the service gave out', () => {
    expect(jobIdSchema().parse('6F1C2D3E-4B5A-4C6D-8E7F-9A0B1C2D3E4F')).toBe('6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f');
  });

  it('keeps other text (an unknown job) and refuses the empty string and more than 128 characters', () => {
    expect(jobIdSchema().parse('Not-A-Job')).toBe('not-a-job');
    expect(jobIdSchema().safeParse('').success).toBe(false);
    expect(jobIdSchema().safeParse('x'.repeat(129)).success).toBe(false);
  });
});

describe('identifier rule', () => {
  it('accepts 1 to 255 characters', () => {
    expect(identifierSchema().safeParse('a').success).toBe(true);
    expect(identifierSchema().safeParse('x'.repeat(255)).success).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'x'.repeat(256)],
    ['a NUL', 'a\u0000b'],
  ])('refuses %s', (_, value) => {
    expect(identifierSchema().safeParse(value).success).toBe(false);
  });

  it('counts characters as JSON Schema maxLength and Postgres length() do: an emoji is one', () => {
    expect(identifierSchema().safeParse('\u{1F600}'.repeat(255)).success).toBe(true);
    expect(identifierSchema().safeParse('\u{1F600}'.repeat(256)).success).toBe(false);
  });
});

describe('timestamp rule', () => {
  it.each([
    [0, '0'],
    [1763679600000, '1763679600000'],
    [Number.MAX_SAFE_INTEGER, String(Number.MAX_SAFE_INTEGER)],
    ['1763679600000', '1763679600000'],
    ['0001763679600000', '0001763679600000'],
    ['9007199254740991', '9007199254740991'],
  ])('takes %j as the signed digits %j', (value, digits) => {
    expect(timestampDigits(value)).toBe(digits);
    expect(timestampSchema().safeParse(value).success).toBe(true);
  });

  it.each([
    -1,
    1.5,
    Number.MAX_SAFE_INTEGER + 1,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    '',
    '-1',
    '1.5',
    '1e3',
    ' 1',
    '9007199254740992',
    '12345678901234567',
    null,
    undefined,
    true,
    [1],
  ])('refuses %j in the middleware check and the schema alike', (value) => {
    expect(timestampDigits(value)).toBeNull();
    expect(timestampSchema().safeParse(value).success).toBe(false);
  });

  it('takes a string of digits exactly when its value is at most the largest safe integer (the pattern the documents state)', () => {
    const digits = fc.oneof(
      fc.stringMatching(/^\d{1,17}$/),
      fc.stringMatching(/^9007199254\d{6,7}$/),
      fc.integer({ min: -20, max: 20 }).map((delta) => (9007199254740991n + BigInt(delta)).toString()),
    );
    fc.assert(
      fc.property(digits, (text) => {
        const expected = text.length <= 16 && BigInt(text) <= BigInt(Number.MAX_SAFE_INTEGER);
        expect(timestampDigits(text) !== null).toBe(expected);
        expect(timestampSchema().safeParse(text).success).toBe(expected);
      }),
      { seed: 40, numRuns: 2_000 },
    );
  });

  it('takes only the string form in a query string', () => {
    expect(timestampTextSchema().safeParse('1763679600000').success).toBe(true);
    expect(timestampTextSchema().safeParse(1763679600000).success).toBe(false);
    expect(timestampTextSchema().safeParse('12345678901234567').success).toBe(false);
  });
});
