import { createRoute, z } from '@hono/zod-openapi';
import type { App } from '../context.js';
import { adminErrorResponses } from '../http/schemas.js';
import { listAdminActions } from './admin-audit.repository.js';
import { adminRouteMeta } from './admin-schemas.js';

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1_000;

const AuditQuerySchema = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE)
    .default(DEFAULT_PAGE)
    .openapi({ param: { name: 'limit', in: 'query' }, description: `Entries per page, 1 to ${MAX_PAGE}` }),
  cursor: z
    .string()
    .regex(/^[1-9]\d{0,18}$/, 'must be the nextCursor of a previous page')
    .optional()
    .openapi({ param: { name: 'cursor', in: 'query' }, description: 'The `nextCursor` of the previous page' }),
});

const AuditEntrySchema = z
  .object({
    id: z.string(),
    at: z.number().int().openapi({ description: 'Epoch milliseconds' }),
    operator: z.string().openapi({
      description:
        'Who made the write: the name of the operator whose token made it, or `merchant:<merchant id>` for a ' +
        'change a merchant made to its own webhook through the signed merchant API',
    }),
    action: z.string().openapi({ example: 'merchant.update' }),
    target: z.string().nullable().openapi({ description: 'What the write applied to (a merchant id, a queue path)' }),
    before: z.unknown().nullable().openapi({ description: 'The settings the write replaced (never a secret)' }),
    after: z.unknown().nullable().openapi({ description: 'The settings the write set (never a secret)' }),
    requestId: z.string().nullable(),
  })
  .openapi('AdminAuditEntry');

const AuditPageSchema = z
  .object({
    entries: z.array(AuditEntrySchema).openapi({ description: 'Newest first' }),
    nextCursor: z.string().nullable().openapi({ description: 'Pass as `cursor` for the next page; null: the last' }),
  })
  .openapi('AdminAuditPage');

export function registerListAudit(app: App): void {
  const route = createRoute({
    method: 'get',
    path: '/admin/v1/audit',
    operationId: 'adminListAudit',
    ...adminRouteMeta,
    summary: 'The audit log of admin writes, newest first',
    description:
      'Every write through the admin API or the queue dashboard, with the operator who made it. Keyset pages: ' +
      'follow `nextCursor`. Entries older than RETENTION_MS are removed.',
    request: { query: AuditQuerySchema },
    responses: {
      200: { description: 'A page of the audit log', content: { 'application/json': { schema: AuditPageSchema } } },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const { limit, cursor } = c.req.valid('query');
    // One more than asked says whether a next page exists.
    const rows = await listAdminActions(c.get('deps').db, { beforeId: cursor, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const entries = page.map((row) => ({
      id: row.id,
      at: row.createdAt.getTime(),
      operator: row.operator,
      action: row.action,
      target: row.target,
      before: row.before ?? null,
      after: row.after ?? null,
      requestId: row.requestId,
    }));
    const nextCursor = rows.length > limit ? (page.at(-1)?.id ?? null) : null;
    return c.json({ entries, nextCursor }, 200);
  });
}
