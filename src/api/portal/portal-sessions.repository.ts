import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from '../../shared/db/client.js';
import { portalTokenHash } from './portal-tokens.js';

/** The session a request's cookie names, as the portal's routes use it. */
export interface PortalSession {
  id: string;
  merchantId: string;
  merchantName: string;
  expiresAt: Date;
}

/** What the operator sees of a session (never its token, which is not kept). */
export interface PortalSessionListing {
  id: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  revokedBy: string | null;
  active: boolean;
}

/** A new session lasting `lifetimeMs` (PORTAL_SESSION_LIFETIME_MS) from now; it is not extended by use. */
export async function insertPortalSession(
  db: Executor,
  session: { merchantId: string; linkId: string; token: string },
  lifetimeMs: number,
): Promise<{ id: string; expiresAt: Date }> {
  const id = randomUUID();
  const expiresAt = new Date(Date.now() + lifetimeMs);
  await db
    .insertInto('portal_sessions')
    .values({
      id,
      merchant_id: session.merchantId,
      link_id: session.linkId,
      token_hash: portalTokenHash(session.token),
      expires_at: expiresAt,
    })
    .execute();
  return { id, expiresAt };
}

/** The live session of a cookie's token: not revoked, not expired, its merchant active. */
export async function findLivePortalSession(db: Executor, token: string): Promise<PortalSession | undefined> {
  const row = await db
    .selectFrom('portal_sessions as s')
    .innerJoin('merchants as m', 'm.id', 's.merchant_id')
    .select(['s.id', 's.merchant_id', 's.expires_at', 'm.name'])
    .where('s.token_hash', '=', portalTokenHash(token))
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', sql<Date>`now()`)
    .where('m.status', '=', 'ACTIVE')
    .executeTakeFirst();
  return row && { id: row.id, merchantId: row.merchant_id, merchantName: row.name, expiresAt: row.expires_at };
}

/** The merchant's sessions, newest first (those ended more than a week ago are removed). */
export async function listPortalSessions(db: Executor, merchantId: string): Promise<PortalSessionListing[]> {
  const rows = await db
    .selectFrom('portal_sessions')
    .select([
      'id',
      'created_at',
      'expires_at',
      'revoked_at',
      'revoked_by',
      sql<boolean>`revoked_at IS NULL AND expires_at > now()`.as('active'),
    ])
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1_000)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    createdAt: row.created_at.getTime(),
    expiresAt: row.expires_at.getTime(),
    revokedAt: row.revoked_at?.getTime() ?? null,
    revokedBy: row.revoked_by,
    active: row.active,
  }));
}

/** Ends one of the merchant's sessions at once; false when it has none of that id. */
export async function revokePortalSession(
  db: Executor,
  revocation: { merchantId: string; sessionId: string; operator: string },
): Promise<boolean> {
  const row = await db
    .updateTable('portal_sessions')
    .set({
      revoked_at: sql<Date>`coalesce(revoked_at, now())`,
      revoked_by: sql<string>`coalesce(revoked_by, ${revocation.operator})`,
    })
    .where('merchant_id', '=', revocation.merchantId)
    .where('id', '=', revocation.sessionId)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}
