import type { Executor } from '../../shared/db/client.js';

/** One admin write, as the audit log keeps it. `before`/`after`: settings only, never a secret. */
export interface AdminAuditEntry {
  operator: string;
  action: string;
  target: string | null;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  requestId: string | null;
}

export interface AdminAuditRow {
  id: string;
  createdAt: Date;
  operator: string;
  action: string;
  target: string | null;
  before: unknown;
  after: unknown;
  requestId: string | null;
}

/**
 * Records an admin write. Called on the write's own transaction (the row exists exactly when the
 * change does) or, where the write is not a Postgres one (the queue dashboard), before it.
 */
export async function recordAdminAction(db: Executor, entry: AdminAuditEntry): Promise<void> {
  await db
    .insertInto('admin_audit_log')
    .values({
      operator: entry.operator,
      action: entry.action,
      target: entry.target,
      before: entry.before == null ? null : JSON.stringify(entry.before),
      after: entry.after == null ? null : JSON.stringify(entry.after),
      request_id: entry.requestId,
    })
    .execute();
}

/** Newest first; `beforeId` is the keyset cursor (the last id of the previous page). */
export async function listAdminActions(
  db: Executor,
  page: { beforeId?: string; limit: number },
): Promise<AdminAuditRow[]> {
  let query = db.selectFrom('admin_audit_log').selectAll().orderBy('id', 'desc').limit(page.limit);
  if (page.beforeId !== undefined) query = query.where('id', '<', page.beforeId);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: String(row.id),
    createdAt: row.created_at,
    operator: row.operator,
    action: row.action,
    target: row.target,
    before: row.before,
    after: row.after,
    requestId: row.request_id,
  }));
}
