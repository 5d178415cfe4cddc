import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { AppError } from '../../shared/errors/errors.js';
import type { AppEnv } from '../context.js';

/**
 * The query of a portal read, checked by `schema` (400 otherwise). A key given twice keeps its values as
 * a list, so a filter may name several states (`?state=running&state=failed`).
 */
export function portalQuery<S extends z.ZodType>(c: Context<AppEnv>, schema: S): z.infer<S> {
  const query: Record<string, string | string[]> = {};
  for (const [name, values] of Object.entries(c.req.queries())) {
    query[name] = values.length === 1 ? (values[0] as string) : values;
  }
  const parsed = schema.safeParse(query);
  if (!parsed.success) {
    throw new AppError(
      'INVALID_REQUEST',
      parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '),
    );
  }
  return parsed.data;
}

/** One value or several of a query key, as a list. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.union([item.transform((value) => [value]), z.array(item).min(1)]);
}

/** A page size in the query: digits, from 1 to `max`. */
export function pageLimit(max: number) {
  return z.coerce.number().int().min(1).max(max);
}
