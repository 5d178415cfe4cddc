import { sql, type Transaction } from 'kysely';
import type { Db } from '../shared/db/client.js';
import type { Database } from '../shared/db/schema.js';
import { openStoredSecret, type SecretColumn, type SecretSealer } from '../shared/secrets/secret-sealer.js';

/**
 * `npm run secrets:reseal`: every stored secret sealed again under the ring's first key, in the
 * current form (bound to its merchant and its column), batch by
 * batch. Each batch is one short transaction over at most `batchSize` rows, walked in id order
 * (keyset, never OFFSET), its rows locked only while they are rewritten. Safe while requests are
 * served: a row is either still under its old key or already under the new one, and the ring opens
 * both, so no signature stops verifying. Along the way:
 * - a value stored before sealing existed (plain text) is sealed;
 * - a value sealed in the older form (bound to the merchant only) is sealed again bound to its column;
 * - a previous merchant secret whose validity has ended is cleared (key and date);
 * - a value sealed under a key the ring does not hold stops the run with an error naming the kid:
 *   the old key must stay in SECRETS_KEYS until the reseal has finished.
 */

export interface ResealProgress {
  table: 'merchants' | 'merchant_webhooks';
  /** Rows read so far in this table. */
  scanned: number;
  /** Rows rewritten so far in this table. */
  changed: number;
}

export interface ResealOptions {
  /** Rows per transaction (default 500). */
  batchSize?: number;
  onProgress?: (progress: ResealProgress) => void;
}

export interface ResealReport {
  merchants: { scanned: number; resealed: number; plainSealed: number; previousCleared: number };
  webhooks: { scanned: number; resealed: number; plainSealed: number };
}

const DEFAULT_BATCH_SIZE = 500;

export async function resealSecrets(db: Db, sealer: SecretSealer, options: ResealOptions = {}): Promise<ResealReport> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const merchants = await resealMerchants(db, sealer, batchSize, options.onProgress);
  const webhooks = await resealWebhooks(db, sealer, batchSize, options.onProgress);
  return { merchants, webhooks };
}

interface SealCounts {
  resealed: number;
  plainSealed: number;
}

/** The stored text sealed in the current form and key, or null when it is so already. */
function resealed(
  sealer: SecretSealer,
  stored: string,
  merchantId: string,
  column: SecretColumn,
  counts: SealCounts,
): string | null {
  if (sealer.isSealedInCurrentForm(stored)) return null;
  if (sealer.isSealed(stored)) counts.resealed++;
  else counts.plainSealed++;
  return sealer.seal(openStoredSecret(sealer, stored, merchantId, column), merchantId, column);
}

/**
 * Walks a table in keyset order, one short transaction per batch: `batch` gets the last key of the
 * previous batch (null for the first) and returns this batch's last key, or null when it was the last
 * (a short batch: no further query is needed to find the table's end). `committed` runs after each
 * batch's commit (progress).
 */
async function inKeyBatches(
  db: Db,
  batch: (trx: Transaction<Database>, after: string | null) => Promise<string | null>,
  committed: () => void,
): Promise<void> {
  let after: string | null = null;
  do {
    const from: string | null = after;
    after = await db.transaction().execute((trx) => batch(trx, from));
    committed();
  } while (after !== null);
}

async function resealMerchants(
  db: Db,
  sealer: SecretSealer,
  batchSize: number,
  onProgress: ResealOptions['onProgress'],
): Promise<ResealReport['merchants']> {
  const counts = { scanned: 0, resealed: 0, plainSealed: 0, previousCleared: 0 };
  let changed = 0;
  await inKeyBatches(
    db,
    async (trx, from) => {
      const rows = await trx
        .selectFrom('merchants')
        .select(['id', 'secret_key', 'previous_secret_key', 'previous_secret_valid_until'])
        .select(sql<Date>`now()`.as('now'))
        .$if(from !== null, (query) => query.where('id', '>', from as string))
        .orderBy('id')
        .limit(batchSize)
        .forUpdate()
        .execute();
      const changes: Array<{ id: string; secret: string; previous: string | null; clear: boolean }> = [];
      for (const row of rows) {
        const secret = resealed(sealer, row.secret_key, row.id, 'merchants.secret_key', counts);
        // Expired by the database's clock, as every other expiry; kept no longer than it verifies.
        const expired =
          row.previous_secret_key !== null &&
          (row.previous_secret_valid_until === null || row.previous_secret_valid_until <= row.now);
        if (expired) counts.previousCleared++;
        const previous =
          row.previous_secret_key === null || expired
            ? null
            : resealed(sealer, row.previous_secret_key, row.id, 'merchants.previous_secret_key', counts);
        if (secret !== null || previous !== null || expired) {
          changes.push({
            id: row.id,
            secret: secret ?? row.secret_key,
            previous: expired ? null : (previous ?? row.previous_secret_key),
            clear: expired,
          });
        }
      }
      if (changes.length > 0) {
        await sql`
          UPDATE merchants AS m
          SET secret_key = v.secret,
              previous_secret_key = v.previous,
              previous_secret_valid_until = CASE WHEN v.clear THEN NULL ELSE m.previous_secret_valid_until END,
              updated_at = now()
          FROM unnest(
            ${changes.map((change) => change.id)}::uuid[],
            ${changes.map((change) => change.secret)}::text[],
            ${changes.map((change) => change.previous)}::text[],
            ${changes.map((change) => change.clear)}::boolean[]
          ) AS v(id, secret, previous, clear)
          WHERE m.id = v.id
        `.execute(trx);
      }
      counts.scanned += rows.length;
      changed += changes.length;
      return rows.length === batchSize ? (rows.at(-1)?.id ?? null) : null;
    },
    () => onProgress?.({ table: 'merchants', scanned: counts.scanned, changed }),
  );
  return counts;
}

async function resealWebhooks(
  db: Db,
  sealer: SecretSealer,
  batchSize: number,
  onProgress: ResealOptions['onProgress'],
): Promise<ResealReport['webhooks']> {
  const counts = { scanned: 0, resealed: 0, plainSealed: 0 };
  let changed = 0;
  await inKeyBatches(
    db,
    async (trx, from) => {
      const rows = await trx
        .selectFrom('merchant_webhooks')
        .select(['merchant_id', 'secret'])
        .$if(from !== null, (query) => query.where('merchant_id', '>', from as string))
        .orderBy('merchant_id')
        .limit(batchSize)
        .forUpdate()
        .execute();
      const changes: Array<{ id: string; secret: string }> = [];
      for (const row of rows) {
        const secret = resealed(sealer, row.secret, row.merchant_id, 'merchant_webhooks.secret', counts);
        if (secret !== null) changes.push({ id: row.merchant_id, secret });
      }
      if (changes.length > 0) {
        // updated_at stays: the secret is the same one under another key, not new settings, and a
        // delivery records its outcome only while updated_at is what it read (recordEndpointFailure).
        await sql`
          UPDATE merchant_webhooks AS w
          SET secret = v.secret
          FROM unnest(
            ${changes.map((change) => change.id)}::uuid[],
            ${changes.map((change) => change.secret)}::text[]
          ) AS v(id, secret)
          WHERE w.merchant_id = v.id
        `.execute(trx);
      }
      counts.scanned += rows.length;
      changed += changes.length;
      return rows.length === batchSize ? (rows.at(-1)?.merchant_id ?? null) : null;
    },
    () => onProgress?.({ table: 'merchant_webhooks', scanned: counts.scanned, changed }),
  );
  return counts;
}
