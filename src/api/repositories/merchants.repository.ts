import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Executor } from '../../shared/db/client.js';
import type { Database, Merchant, MerchantStatus, SignatureVersion } from '../../shared/db/schema.js';
import type { SecretSealer } from '../../shared/secrets/secret-sealer.js';

export async function findMerchantById(db: Executor, merchantId: string): Promise<Merchant | undefined> {
  return db.selectFrom('merchants').selectAll().where('id', '=', merchantId).executeTakeFirst();
}

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
      secret_key: secrets.seal(merchant.secretKey, id),
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
 * The current secret becomes the previous one, valid until `previousValidUntil` (still sealed as it
 * was: the same merchant's row). null: the old secret stops at once and is not kept at all.
 */
export async function rotateMerchantSecret(
  db: Executor,
  secrets: SecretSealer,
  merchantId: string,
  newSecretKey: string,
  previousValidUntil: Date | null,
): Promise<Merchant | undefined> {
  return db
    .updateTable('merchants')
    .set((eb) => ({
      previous_secret_key: previousValidUntil === null ? null : eb.ref('secret_key'),
      previous_secret_valid_until: previousValidUntil,
      secret_key: secrets.seal(newSecretKey, merchantId),
      updated_at: eb.fn('now'),
    }))
    .where('id', '=', merchantId)
    .returningAll()
    .executeTakeFirst();
}
