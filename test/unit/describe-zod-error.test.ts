import { z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { describeZodError, validationHook } from '../../src/api/http/validation-hook.js';
import { AppError } from '../../src/shared/errors/errors.js';

function errorFor(schema: z.ZodType, value: unknown): z.ZodError {
  const result = schema.safeParse(value);
  if (result.success) throw new Error('value was valid');
  return result.error;
}

describe('describeZodError', () => {
  it('names a top-level field', () => {
    const message = describeZodError(errorFor(z.object({ status: z.enum(['ACTIVE', 'INACTIVE']) }), { status: 'X' }));
    expect(message).toMatch(/^status: /);
  });

  it('names an array entry by its index', () => {
    const message = describeZodError(
      errorFor(z.object({ ids: z.array(z.uuid()) }), { ids: ['a', 'b'].map(() => 'x') }),
    );
    expect(message).toMatch(/^ids\[0\]: /);
    const third = describeZodError(
      errorFor(z.object({ ids: z.array(z.uuid()) }), {
        ids: ['3b9f0c6a-1e2d-4f5a-8b7c-8d9e0f1a2b3c', '3b9f0c6a-1e2d-4f5a-8b7c-8d9e0f1a2b3d', 'nope'],
      }),
    );
    expect(third).toMatch(/^ids\[2\]: /);
  });

  it('joins nested paths with dots', () => {
    const schema = z.object({ games: z.array(z.object({ betConstraints: z.record(z.string(), z.number()) })) });
    const message = describeZodError(errorFor(schema, { games: [{ betConstraints: { EUR: 'x' } }] }));
    expect(message).toMatch(/^games\[0\]\.betConstraints\.EUR: /);
  });

  it('names a missing field', () => {
    expect(describeZodError(errorFor(z.object({ playerIds: z.array(z.string()) }), {}))).toMatch(/^playerIds: /);
  });

  it('gives the bare message when the issue has no path', () => {
    const message = describeZodError(errorFor(z.string(), 5));
    expect(message.length).toBeGreaterThan(0);
    expect(message).not.toMatch(/^: /);
  });

  it('says "Invalid request" when there is no issue', () => {
    expect(describeZodError(new z.ZodError([]))).toBe('Invalid request');
  });

  it('does not echo the offending value', () => {
    const secretLooking = 'super-secret-value-1234';
    const schema = z.object({ status: z.enum(['ACTIVE', 'INACTIVE']), id: z.uuid(), n: z.number() });
    for (const value of [{ status: secretLooking }, { status: 'ACTIVE', id: secretLooking }]) {
      expect(describeZodError(errorFor(schema, value))).not.toContain(secretLooking);
    }
  });
});

describe('validationHook', () => {
  it('turns a failed parse into INVALID_REQUEST naming the field', () => {
    const result = z.object({ limit: z.number().int().min(1) }).safeParse({ limit: 0 });
    let thrown: unknown;
    try {
      validationHook(result);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).status).toBe(400);
    expect((thrown as AppError).toBody()).toEqual({ errorCode: 1, errorMessage: expect.stringMatching(/^limit: /) });
  });

  it('lets a successful parse through', () => {
    expect(() => validationHook({ success: true })).not.toThrow();
  });
});
