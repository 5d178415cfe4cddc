import type { z } from '@hono/zod-openapi';
import { AppError } from '../../shared/errors/errors.js';

/** Names the first offending field, e.g. `ids[3]: Invalid UUID`, without echoing its value. */
export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid request';
  const path = issue.path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? String(part) : `.${String(part)}`))
    .join('');
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** The one hook every zod-validated route shares: a failed parse is always the same 400 body. */
export function validationHook(result: { success: boolean; error?: unknown }): void {
  if (!result.success) {
    throw new AppError('INVALID_REQUEST', describeZodError(result.error as z.ZodError));
  }
}
