import type { Executor } from '../db/client.js';
import type { WebhookDeliveryState } from '../db/schema.js';
import { openStoredSecret, type SecretSealer } from '../secrets/secret-sealer.js';
import type { WebhookEventType } from './webhook-catalogue.js';

export interface WebhookSettings {
  url: string;
  events: WebhookEventType[];
  secret: string;
}

/** The merchant's webhook with its signing secret opened (stored sealed for the merchant's id). */
export async function findWebhook(
  db: Executor,
  secrets: SecretSealer,
  merchantId: string,
): Promise<WebhookSettings | undefined> {
  const row = await db
    .selectFrom('merchant_webhooks')
    .select(['merchant_id', 'url', 'events', 'secret'])
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return (
    row && {
      url: row.url,
      events: row.events as WebhookEventType[],
      secret: openStoredSecret(secrets, row.secret, row.merchant_id),
    }
  );
}

/** Which events the merchant's webhook takes, or undefined without one: no secret read or opened. */
export async function findWebhookEvents(db: Executor, merchantId: string): Promise<WebhookEventType[] | undefined> {
  const row = await db
    .selectFrom('merchant_webhooks')
    .select('events')
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return row?.events as WebhookEventType[] | undefined;
}

/** Sets the merchant's webhook, replacing the one it had (URL, events and secret alike); the secret is stored sealed. */
export async function upsertWebhook(
  db: Executor,
  secrets: SecretSealer,
  merchantId: string,
  webhook: WebhookSettings,
): Promise<void> {
  await db
    .insertInto('merchant_webhooks')
    .values({
      merchant_id: merchantId,
      url: webhook.url,
      events: webhook.events,
      secret: secrets.seal(webhook.secret, merchantId),
    })
    .onConflict((conflict) =>
      conflict.column('merchant_id').doUpdateSet((eb) => ({
        url: eb.ref('excluded.url'),
        events: eb.ref('excluded.events'),
        secret: eb.ref('excluded.secret'),
        updated_at: eb.fn('now'),
      })),
    )
    .execute();
}

export async function deleteWebhook(db: Executor, merchantId: string): Promise<boolean> {
  const result = await db.deleteFrom('merchant_webhooks').where('merchant_id', '=', merchantId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export interface NewWebhookEvent {
  id: string;
  merchantId: string;
  type: WebhookEventType;
  jobId: string;
  body: string;
}

/** Records an event before its first attempt; an event recorded already is left as it is. */
export async function recordWebhookEvent(db: Executor, event: NewWebhookEvent): Promise<void> {
  await db
    .insertInto('webhook_deliveries')
    .values({
      id: event.id,
      merchant_id: event.merchantId,
      type: event.type,
      job_id: event.jobId,
      payload: event.body,
    })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .execute();
}

export async function findDeliveryState(db: Executor, eventId: string): Promise<WebhookDeliveryState | undefined> {
  const row = await db.selectFrom('webhook_deliveries').select('state').where('id', '=', eventId).executeTakeFirst();
  return row?.state;
}

export interface DeliveryAttempt {
  state: WebhookDeliveryState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
}

/** The outcome of one attempt. A delivery already delivered stays so (a late, duplicate attempt). */
export async function recordDeliveryAttempt(db: Executor, eventId: string, attempt: DeliveryAttempt): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({
      state: attempt.state,
      attempts: attempt.attempts,
      last_status: attempt.lastStatus,
      last_error: attempt.lastError,
      next_attempt_at: attempt.nextAttemptAt,
      delivered_at: attempt.deliveredAt,
    })
    .where('id', '=', eventId)
    .where('state', '!=', 'delivered')
    .execute();
}

export interface WebhookDeliveryView {
  eventId: string;
  type: string;
  jobId: string;
  state: WebhookDeliveryState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
}

/** A merchant's latest deliveries, newest first (one index range scan). */
export async function listWebhookDeliveries(
  db: Executor,
  merchantId: string,
  limit: number,
): Promise<WebhookDeliveryView[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select([
      'id',
      'type',
      'job_id',
      'state',
      'attempts',
      'last_status',
      'last_error',
      'next_attempt_at',
      'delivered_at',
      'created_at',
    ])
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    eventId: row.id,
    type: row.type,
    jobId: row.job_id,
    state: row.state,
    attempts: row.attempts,
    lastStatus: row.last_status,
    lastError: row.last_error,
    nextAttemptAt: row.next_attempt_at,
    deliveredAt: row.delivered_at,
    createdAt: row.created_at,
  }));
}
