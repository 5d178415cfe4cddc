import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Executor } from '../../shared/db/client.js';
import type { Database, Merchant, MerchantStatus, SignatureVersion } from '../../shared/db/schema.js';
import { openStoredSecret, type SecretSealer, SecretUnreadableError } from '../../shared/secrets/secret-sealer.js';

/** The merchant's row, locked until the transaction ends: what an audited change replaces. */
export async function lockMerchant(trx: Transaction<Database>, merchantId: string): Promise<Merchant | undefined> {
  return trx.selectFrom('merchants').selectAll().where('id', '=', merchantId).forUpdate().executeTakeFirst();
}

/** The secret is stored sealed for the new merchant's id, which is chosen here so that it can be sealed for. */
export async function insertMerchant(
  db: Executor,
  secrets: SecretSealer,
  merchant: { name: string; secretKey: string; allowedIps: string[] | null },
): Promise<Merchant> {
  const id = randomUUID();
  return db
    .insertInto('merchants')
    .values({
      id,
      name: merchant.name,
      secret_key: secrets.seal(merchant.secretKey, id, 'merchants.secret_key'),
      allowed_ips: merchant.allowedIps,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateMerchant(
  db: Executor,
  merchantId: string,
  changes: {
    status?: MerchantStatus;
    allowedIps?: string[] | null;
    maxQueuedJobs?: number | null;
    rateLimitPerSecond?: number | null;
    signatureVersion?: SignatureVersion;
    requireSignatureV2?: boolean;
  },
): Promise<Merchant | undefined> {
  return db
    .updateTable('merchants')
    .set((eb) => ({
      ...(changes.status !== undefined && { status: changes.status }),
      ...(changes.allowedIps !== undefined && { allowed_ips: changes.allowedIps }),
      ...(changes.maxQueuedJobs !== undefined && { max_queued_jobs: changes.maxQueuedJobs }),
      ...(changes.rateLimitPerSecond !== undefined && { rate_limit_per_second: changes.rateLimitPerSecond }),
      ...(changes.signatureVersion !== undefined && { signature_version: changes.signatureVersion }),
      ...(changes.requireSignatureV2 !== undefined && { require_signature_v2: changes.requireSignatureV2 }),
      updated_at: eb.fn('now'),
    }))
    .where('id', '=', merchantId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * The current secret becomes the previous one, valid until `previousValidUntil`. null: the old secret
 * stops at once and is not kept at all. Sealed values are bound to their column, so the old secret is
 * opened and sealed again for the previous-secret column (the row is locked meanwhile). One that does
 * not open verified nothing before the rotation either: it is not kept.
 */
export async function rotateMerchantSecret(
  trx: Transaction<Database>,
  secrets: SecretSealer,
  merchantId: string,
  newSecretKey: string,
  previousValidUntil: Date | null,
): Promise<Merchant | undefined> {
  const current = await lockMerchant(trx, merchantId);
  if (!current) return undefined;
  const previous = previousValidUntil === null ? null : resealedAsPrevious(secrets, current);
  return trx
    .updateTable('merchants')
    .set((eb) => ({
      previous_secret_key: previous,
      previous_secret_valid_until: previous === null ? null : previousValidUntil,
      secret_key: secrets.seal(newSecretKey, merchantId, 'merchants.secret_key'),
      updated_at: eb.fn('now'),
    }))
    .where('id', '=', merchantId)
    .returningAll()
    .executeTakeFirst();
}

function resealedAsPrevious(secrets: SecretSealer, merchant: Merchant): string | null {
  try {
    const plain = openStoredSecret(secrets, merchant.secret_key, merchant.id, 'merchants.secret_key');
    return secrets.seal(plain, merchant.id, 'merchants.previous_secret_key');
  } catch (error) {
    if (error instanceof SecretUnreadableError) return null;
    throw error;
  }
}
