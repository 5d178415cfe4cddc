import type { Executor } from '../../shared/db/client.js';
import type { Merchant, MerchantStatus, SignatureVersion } from '../../shared/db/schema.js';

export async function findMerchantById(db: Executor, merchantId: string): Promise<Merchant | undefined> {
  return db.selectFrom('merchants').selectAll().where('id', '=', merchantId).executeTakeFirst();
}

export async function insertMerchant(
  db: Executor,
  merchant: { name: string; secretKey: string; allowedIps: string[] | null },
): Promise<Merchant> {
  return db
    .insertInto('merchants')
    .values({ name: merchant.name, secret_key: merchant.secretKey, allowed_ips: merchant.allowedIps })
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
      updated_at: eb.fn('now'),
    }))
    .where('id', '=', merchantId)
    .returningAll()
    .executeTakeFirst();
}

/** The current secret becomes the previous one, valid until `previousValidUntil`. */
export async function rotateMerchantSecret(
  db: Executor,
  merchantId: string,
  newSecretKey: string,
  previousValidUntil: Date,
): Promise<Merchant | undefined> {
  return db
    .updateTable('merchants')
    .set((eb) => ({
      previous_secret_key: eb.ref('secret_key'),
      previous_secret_valid_until: previousValidUntil,
      secret_key: newSecretKey,
      updated_at: eb.fn('now'),
    }))
    .where('id', '=', merchantId)
    .returningAll()
    .executeTakeFirst();
}
