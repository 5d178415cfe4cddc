import type { Context } from 'hono';
import type { Executor } from '../../shared/db/client.js';
import type { AppEnv } from '../context.js';
import { recordAdminAction } from '../merchants/admin-audit.repository.js';
import { portalSession } from './portal-session.middleware.js';

/** The audit log's actor for what a merchant's person did through a portal session. */
export function portalActor(sessionId: string): string {
  return `portal:${sessionId}`;
}

/**
 * Records an action taken in the portal (an abort, a redelivery, a test event) in the same log as the
 * operators' and the merchants' own writes: the actor is the portal session (`portal:<sessionId>`); the
 * merchant it acted for is in `after`.
 */
export async function auditPortalAction(
  c: Context<AppEnv>,
  db: Executor,
  action: { action: string; target: string | null; after?: Record<string, unknown> },
): Promise<void> {
  const session = portalSession(c);
  await recordAdminAction(db, {
    operator: portalActor(session.id),
    action: action.action,
    target: action.target,
    after: { merchantId: session.merchantId, ...action.after },
    requestId: c.get('requestId') ?? null,
  });
}
