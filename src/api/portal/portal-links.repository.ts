import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from '../../shared/db/client.js';
import { portalTokenHash } from './portal-tokens.js';

/** Links and sessions are kept this long past their end (for the operator's list), then removed. */
const KEPT_AFTER_END = sql`interval '7 days'`;

/**
 * Records a new link for `merchantId`, valid `lifetimeMs` (PORTAL_LINK_LIFETIME_MS) from now; it opens
 * one session. Only its token's hash is stored.
 */
export async function insertPortalLink(
  db: Executor,
  link: { merchantId: string; token: string; createdBy: string },
  lifetimeMs: number,
): Promise<{ id: string; expiresAt: Date }> {
  const id = randomUUID();
  const expiresAt = new Date(Date.now() + lifetimeMs);
  // Issuing links is rare (an operator's request): the moment to drop those long past their end.
  await db.deleteFrom('portal_links').where('expires_at', '<', sql<Date>`now() - ${KEPT_AFTER_END}`).execute();
  await db.deleteFrom('portal_sessions').where('expires_at', '<', sql<Date>`now() - ${KEPT_AFTER_END}`).execute();
  await db
    .insertInto('portal_links')
    .values({
      id,
      merchant_id: link.merchantId,
      token_hash: portalTokenHash(link.token),
      created_by: link.createdBy,
      expires_at: expiresAt,
    })
    .execute();
  return { id, expiresAt };
}

/**
 * Uses a link: one statement marks it used if it is unused and unexpired, and says whose it was. Two
 * requests with the same link at once: the second waits for the first's row lock, then finds `used_at`
 * set and gets nothing. Postgres's clock decides expiry, the same for every API process.
 */
export async function consumePortalLink(
  db: Executor,
  token: string,
): Promise<{ id: string; merchantId: string } | undefined> {
  const row = await db
    .updateTable('portal_links')
    .set({ used_at: sql<Date>`now()` })
    .where('token_hash', '=', portalTokenHash(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(['id', 'merchant_id'])
    .executeTakeFirst();
  return row && { id: row.id, merchantId: row.merchant_id };
}
