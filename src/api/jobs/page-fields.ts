import { z } from '@hono/zod-openapi';

/**
 * The keyset paging of the job lists (jobs/list, jobs/rewards, jobs/unapplied): a request's `after`
 * and `limit`, and a page's `next`, which the following request sends back as its `after`. `cursor`
 * is the schema of what a page ends on (a job or reward id, or an identifier of the request).
 */
export function pageRequestFields<C extends z.ZodType>(
  cursor: C,
  page: { items: string; max: number; default: number },
) {
  return {
    after: cursor.nullish().openapi({ description: "The previous page's `next`; absent for the first page" }),
    limit: z
      .number()
      .int()
      .min(1)
      .max(page.max)
      .nullish()
      .openapi({ description: `${page.items} per page, 1 to ${page.max} (default ${page.default})` }),
  };
}

/** A page's `next`: the `after` of the page that follows it. */
export const nextPageField = <C extends z.ZodType>(cursor: C) =>
  cursor.nullable().openapi({ description: 'The `after` of the next page; null when this page is the last' });

/** The page a request asks for: `after` and `limit` as sent, absent or null alike undefined (the first page, the default size). */
export function requestedPage<Cursor>(body: { after?: Cursor | null; limit?: number | null }) {
  return { after: body.after ?? undefined, limit: body.limit ?? undefined };
}
