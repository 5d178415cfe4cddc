import type { Context } from 'hono';
import type { Executor } from '../../shared/db/client.js';
import type { AppEnv } from '../context.js';
import { recordAdminAction } from './admin-audit.repository.js';

/**
 * Records the request's admin write under its operator (set by the admin authentication), on `db`:
 * the write's own transaction, or the pool before a write that is not Postgres's.
 */
export async function auditAdminWrite(
  c: Context<AppEnv>,
  db: Executor,
  write: {
    action: string;
    target: string | null;
    before?: Record<string, unknown> | null;
    after?: Record<string, unknown> | null;
  },
): Promise<void> {
  const operator = c.get('operator');
  // The admin gate sets it before any handler runs; a write without it is a wiring mistake.
  if (operator === undefined) throw new Error('admin write without an authenticated operator');
  await recordAdminAction(db, { ...write, operator, requestId: c.get('requestId') ?? null });
}

/** The audit log's actor for a write a merchant made itself through the signed merchant API. */
function merchantActor(merchantId: string): string {
  return `merchant:${merchantId}`;
}

/**
 * Records a write a merchant made to its own settings (its webhook) through the signed merchant API, in
 * the same log as the operators' writes: the actor is the merchant (`merchant:<id>`), never an operator.
 */
export async function auditMerchantWrite(
  c: Context<AppEnv>,
  db: Executor,
  write: {
    action: string;
    target: string | null;
    before?: Record<string, unknown> | null;
    after?: Record<string, unknown> | null;
  },
): Promise<void> {
  const merchant = c.get('merchant');
  await recordAdminAction(db, {
    ...write,
    operator: merchantActor(merchant.id),
    requestId: c.get('requestId') ?? null,
  });
}
