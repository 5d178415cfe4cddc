import { sql, type Transaction } from 'kysely';
import type { Executor } from '../db/client.js';
import type { Database, WebhookDeliveryState } from '../db/schema.js';
import { openStoredSecret, type SecretSealer } from '../secrets/secret-sealer.js';
import type { AnyWebhookEventType, WebhookEventType } from './webhook-catalogue.js';

/**
 * A merchant's delivery log as the merchant reads and acts on it: each attempt sent (time, status,
 * duration), keyset pages of deliveries with their attempts, and deliveries opened again to be sent
 * (webhooks/redeliver, webhooks/recover). Set-based: one statement per page or batch.
 */

/** Each attempt sent, as the log shows it. An event with more is shown with its latest ones. */
export const MAX_ATTEMPTS_SHOWN = 20;

export interface SentAttempt {
  eventId: string;
  status: number | null;
  durationMs: number;
  error: string | null;
}

export async function recordSentAttempt(db: Executor, attempt: SentAttempt): Promise<void> {
  await db
    .insertInto('webhook_delivery_attempts')
    .values({
      event_id: attempt.eventId,
      status: attempt.status,
      duration_ms: Math.max(0, Math.round(attempt.durationMs)),
      error: attempt.error,
    })
    .execute();
}

/** Where a page ends: the last delivery's `created_at` as Postgres prints it (to the microsecond) and its id. */
interface DeliveryCursor {
  createdAt: string;
  id: string;
}

export interface DeliveryPageQuery {
  /** The event id of the last delivery of the previous page. */
  afterEventId?: string;
  limit: number;
  state?: WebhookDeliveryState;
  type?: AnyWebhookEventType;
  jobId?: string;
  /** Nothing older (the retention): the sweeper may not have removed it yet, but it is gone for the merchant. */
  notBefore: Date;
}

export interface LoggedDelivery {
  eventId: string;
  type: AnyWebhookEventType;
  jobId: string;
  state: WebhookDeliveryState;
  lastError: string | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
  attempts: Array<{ at: Date; status: number | null; durationMs: number; error: string | null }>;
}

/** A page of the merchant's deliveries, newest first, each with its latest attempts (two statements). */
export async function listDeliveryPage(
  db: Executor,
  merchantId: string,
  query: DeliveryPageQuery,
): Promise<LoggedDelivery[]> {
  let select = db
    .selectFrom('webhook_deliveries')
    .select(['id', 'type', 'job_id', 'state', 'last_error', 'next_attempt_at', 'delivered_at', 'created_at'])
    .select(sql<string>`created_at::text`.as('created_at_text'))
    .where('merchant_id', '=', merchantId)
    .where('created_at', '>=', query.notBefore)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit);
  if (query.afterEventId !== undefined) {
    // The page after one of this merchant's deliveries; an event it does not have gives an empty page.
    select = select.where(
      sql<boolean>`(created_at, id) < (SELECT d.created_at, d.id FROM webhook_deliveries d
        WHERE d.merchant_id = ${merchantId} AND d.id = ${query.afterEventId}::uuid)`,
    );
  }
  if (query.state) select = select.where('state', '=', query.state);
  if (query.type) select = select.where('type', '=', query.type);
  if (query.jobId !== undefined) select = select.where('job_id', '=', query.jobId);
  const rows = await select.execute();
  if (rows.length === 0) return [];
  const attempts = await db
    .selectFrom('webhook_delivery_attempts')
    .select(['event_id', 'attempted_at', 'status', 'duration_ms', 'error'])
    .where('event_id', '=', sql<string>`ANY(${rows.map((row) => row.id)}::uuid[])`)
    .orderBy('event_id')
    .orderBy('attempted_at', 'desc')
    .execute();
  const byEvent = new Map<string, LoggedDelivery['attempts']>();
  for (const attempt of attempts) {
    const list = byEvent.get(attempt.event_id) ?? [];
    if (list.length < MAX_ATTEMPTS_SHOWN) {
      list.push({
        at: attempt.attempted_at,
        status: attempt.status,
        durationMs: attempt.duration_ms,
        error: attempt.error,
      });
    }
    byEvent.set(attempt.event_id, list);
  }
  return rows.map((row) => ({
    eventId: row.id,
    type: row.type as AnyWebhookEventType,
    jobId: row.job_id,
    state: row.state,
    lastError: row.last_error,
    nextAttemptAt: row.next_attempt_at,
    deliveredAt: row.delivered_at,
    createdAt: row.created_at,
    // Oldest first, as they happened.
    attempts: (byEvent.get(row.id) ?? []).reverse(),
  }));
}

/** A delivery opened again to be sent: what its job needs. */
export interface ReopenedDelivery {
  eventId: string;
  type: AnyWebhookEventType;
  jobId: string;
  body: string;
  attempts: number;
  cursor: DeliveryCursor;
}

interface ReopenedRow {
  id: string;
  type: string;
  job_id: string;
  body: string;
  attempts: number;
  created_at_text: string;
}

function reopened(row: ReopenedRow): ReopenedDelivery {
  return {
    eventId: row.id,
    type: row.type as AnyWebhookEventType,
    jobId: row.job_id,
    body: row.body,
    attempts: row.attempts,
    cursor: { createdAt: row.created_at_text, id: row.id },
  };
}

/**
 * One of the merchant's deliveries set `pending` again (whatever its outcome: a delivered event may be
 * sent again on request), or undefined when the merchant has no such event within the retention.
 */
export async function reopenDelivery(
  db: Executor,
  merchantId: string,
  eventId: string,
  notBefore: Date,
): Promise<ReopenedDelivery | undefined> {
  const result = await sql<ReopenedRow>`
    UPDATE webhook_deliveries
    SET state = 'pending', next_attempt_at = now()
    WHERE id = ${eventId}::uuid AND merchant_id = ${merchantId}::uuid AND created_at >= ${notBefore}
    RETURNING id, type, job_id, payload::text AS body, attempts, created_at::text AS created_at_text
  `.execute(db);
  const row = result.rows[0];
  return row && reopened(row);
}

export interface UndeliveredQuery {
  since: Date;
  until: Date;
  /** Only the types the endpoint takes now (the others would fail again at once). */
  types: readonly WebhookEventType[];
  after?: DeliveryCursor;
  limit: number;
}

/**
 * The next batch of the merchant's events that were not delivered (failed or dropped) between `since`
 * and `until`, oldest first, after the cursor: set `pending` again in the same statement and answered
 * in that order. Rows another recovery holds right now are skipped, not waited for.
 */
export async function reopenUndelivered(
  db: Executor,
  merchantId: string,
  query: UndeliveredQuery,
): Promise<ReopenedDelivery[]> {
  const after = query.after
    ? sql`AND (created_at, id) > (${query.after.createdAt}::timestamptz, ${query.after.id}::uuid)`
    : sql``;
  const result = await sql<ReopenedRow>`
    WITH picked AS (
      SELECT id FROM webhook_deliveries
      WHERE merchant_id = ${merchantId}::uuid
        AND created_at >= ${query.since} AND created_at <= ${query.until}
        AND state IN ('failed', 'dropped')
        AND type = ANY(${[...query.types]}::text[])
        ${after}
      ORDER BY created_at, id
      LIMIT ${query.limit}
      FOR UPDATE SKIP LOCKED
    ), reopened AS (
      UPDATE webhook_deliveries AS d
      SET state = 'pending', next_attempt_at = now()
      FROM picked WHERE d.id = picked.id
      RETURNING d.id, d.type, d.job_id, d.payload::text AS body, d.attempts, d.created_at,
        d.created_at::text AS created_at_text
    )
    SELECT id, type, job_id, body, attempts, created_at_text FROM reopened ORDER BY created_at, id
  `.execute(db);
  return result.rows.map(reopened);
}

/** How many events a recovery over this span would send again (its answer). */
export async function countUndelivered(
  db: Executor,
  merchantId: string,
  query: Pick<UndeliveredQuery, 'since' | 'until' | 'types'>,
): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('merchant_id', '=', merchantId)
    .where('created_at', '>=', query.since)
    .where('created_at', '<=', query.until)
    .where('state', 'in', ['failed', 'dropped'])
    .where('type', 'in', [...query.types])
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * A rotation: the current secret becomes the previous one, signing too until `previousExpiresAt`, and
 * `secret` signs from now on. Each is sealed for its own column, so the current one is opened and sealed
 * again as the previous (a sealed value does not open in another column). `updated_at` stays: the
 * endpoint is the same one, so an attempt in flight still says something about it (see
 * recordEndpointFailure). Runs on the caller's transaction (the row is locked for it). False: the merchant
 * has no webhook.
 */
export async function rotateWebhookSecret(
  trx: Transaction<Database>,
  secrets: SecretSealer,
  merchantId: string,
  secret: string,
  previousExpiresAt: Date,
): Promise<boolean> {
  const row = await trx
    .selectFrom('merchant_webhooks')
    .select('secret')
    .where('merchant_id', '=', merchantId)
    .forUpdate()
    .executeTakeFirst();
  if (!row) return false;
  const current = openStoredSecret(secrets, row.secret, merchantId, 'merchant_webhooks.secret');
  await trx
    .updateTable('merchant_webhooks')
    .set({
      previous_secret: secrets.seal(current, merchantId, 'merchant_webhooks.previous_secret'),
      previous_secret_expires_at: previousExpiresAt,
      secret: secrets.seal(secret, merchantId, 'merchant_webhooks.secret'),
    })
    .where('merchant_id', '=', merchantId)
    .execute();
  return true;
}
