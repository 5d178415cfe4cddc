import { sql } from 'kysely';
import type { Executor } from '../db/client.js';
import type { WebhookDeliveryState } from '../db/schema.js';
import { openStoredSecret, type SecretSealer } from '../secrets/secret-sealer.js';
import type { AnyWebhookEventType, WebhookEventType } from './webhook-catalogue.js';

export interface WebhookSettings {
  url: string;
  events: WebhookEventType[];
  secret: string;
}

/** A webhook without its secret: what the notifier and the admin view need (nothing opened). */
export interface WebhookStatus {
  url: string;
  events: WebhookEventType[];
  disabledAt: Date | null;
  disabledReason: string | null;
  failingSince: Date | null;
}

/** A webhook as the delivery sees it: its status and its signing secret, opened. */
export interface StoredWebhook extends WebhookStatus {
  secret: string;
  /**
   * The secret a rotation replaced, opened, while it still signs (until previous_secret_expires_at);
   * null otherwise, or when it no longer opens (a key removed from SECRETS_KEYS within its 24 h).
   */
  previousSecret: string | null;
  /**
   * When its settings were last written (`updated_at` as Postgres prints it, to the microsecond): an
   * attempt's outcome is recorded only against the settings it was sent with (see recordEndpointFailure).
   */
  settingsVersion: string;
}

/** The merchant's webhook without its secret (none is read or opened), or undefined without one. */
export async function findWebhookStatus(db: Executor, merchantId: string): Promise<WebhookStatus | undefined> {
  const row = await db
    .selectFrom('merchant_webhooks')
    .select(['url', 'events', 'disabled_at', 'disabled_reason', 'failing_since'])
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return (
    row && {
      url: row.url,
      events: row.events as WebhookEventType[],
      disabledAt: row.disabled_at,
      disabledReason: row.disabled_reason,
      failingSince: row.failing_since,
    }
  );
}

/** The merchant's webhook with its signing secret opened (stored sealed for the merchant's id). */
export async function findWebhook(
  db: Executor,
  secrets: SecretSealer,
  merchantId: string,
): Promise<StoredWebhook | undefined> {
  const row = await db
    .selectFrom('merchant_webhooks')
    .select(['merchant_id', 'url', 'events', 'secret', 'disabled_at', 'disabled_reason', 'failing_since'])
    .select(sql<string>`updated_at::text`.as('settings_version'))
    .select(
      sql<string | null>`CASE WHEN previous_secret_expires_at > now() THEN previous_secret END`.as('previous_secret'),
    )
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return (
    row && {
      url: row.url,
      events: row.events as WebhookEventType[],
      secret: openStoredSecret(secrets, row.secret, row.merchant_id, 'merchant_webhooks.secret'),
      previousSecret: openPrevious(secrets, row.previous_secret, row.merchant_id),
      disabledAt: row.disabled_at,
      disabledReason: row.disabled_reason,
      failingSince: row.failing_since,
      settingsVersion: row.settings_version,
    }
  );
}

/** The previous secret must never stop the current one from signing: one that does not open is left out. */
function openPrevious(secrets: SecretSealer, stored: string | null, merchantId: string): string | null {
  if (stored === null) return null;
  try {
    return openStoredSecret(secrets, stored, merchantId, 'merchant_webhooks.previous_secret');
  } catch {
    return null;
  }
}

/**
 * Sets the merchant's webhook, replacing the one it had (URL, events and secret alike; the secret is
 * stored sealed). A disabled endpoint is enabled again, with a clean record of failures.
 */
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
      secret: secrets.seal(webhook.secret, merchantId, 'merchant_webhooks.secret'),
    })
    .onConflict((conflict) =>
      conflict.column('merchant_id').doUpdateSet((eb) => ({
        url: eb.ref('excluded.url'),
        events: eb.ref('excluded.events'),
        secret: eb.ref('excluded.secret'),
        updated_at: eb.fn('now'),
        failing_since: null,
        disabled_at: null,
        disabled_reason: null,
        // A new secret replaces the old one at once: only a rotation keeps the old one signing.
        previous_secret: null,
        previous_secret_expires_at: null,
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
  type: AnyWebhookEventType;
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

/**
 * The outcome of one attempt; false when the row was not changed. A delivery already delivered stays so
 * (a late, duplicate attempt); one dropped meanwhile stays dropped unless this attempt delivered it.
 */
export async function recordDeliveryAttempt(db: Executor, eventId: string, attempt: DeliveryAttempt): Promise<boolean> {
  const result = await db
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
    .where('state', 'in', attempt.state === 'delivered' ? ['pending', 'dropped', 'failed'] : ['pending'])
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export interface DroppedWebhookEvent extends NewWebhookEvent {
  reason: string;
}

/**
 * Events given up unsent: each recorded `dropped` with its reason, whether or not an attempt had
 * recorded it yet. An event that has already ended (delivered, failed, dropped) keeps its outcome.
 */
export async function recordDroppedEvents(db: Executor, events: readonly DroppedWebhookEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db
    .insertInto('webhook_deliveries')
    .values(
      events.map((event) => ({
        id: event.id,
        merchant_id: event.merchantId,
        type: event.type,
        job_id: event.jobId,
        payload: event.body,
        state: 'dropped' as const,
        last_error: event.reason,
      })),
    )
    .onConflict((conflict) =>
      conflict
        .column('id')
        .doUpdateSet((eb) => ({
          state: 'dropped' as const,
          last_error: eb.ref('excluded.last_error'),
          next_attempt_at: null,
        }))
        .where('webhook_deliveries.state', '=', 'pending'),
    )
    .execute();
}

/**
 * A failed attempt against the merchant's endpoint: notes when failing began (first failure since the
 * last delivery) and, once every attempt has failed for `disableAfterMs`, disables the endpoint. One
 * statement, which writes only on those two occasions (not at every failure). Answers the new
 * `disabled_at` when this call disabled it.
 *
 * Only against the settings the attempt was sent with (`settingsVersion`, from findWebhook): an attempt
 * still waiting on the old receiver when the merchant writes new settings (which enable the endpoint
 * with a clean record) says nothing about the new ones, so it must not start their failing clock.
 */
export async function recordEndpointFailure(
  db: Executor,
  merchantId: string,
  settingsVersion: string,
  disableAfterMs: number,
  lastError: string,
): Promise<{ disabledAt: Date; reason: string } | undefined> {
  const due = sql<boolean>`merchant_webhooks.failing_since <= now() - make_interval(secs => ${disableAfterMs / 1000})`;
  const row = await db
    .updateTable('merchant_webhooks')
    .set((eb) => ({
      failing_since: eb.fn.coalesce('failing_since', sql<Date>`now()`),
      disabled_at: sql<Date | null>`CASE WHEN ${due} THEN now() END`,
      disabled_reason: sql<string | null>`CASE WHEN ${due} THEN
        'every delivery failed since ' || to_char(merchant_webhooks.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
        || ' (last: ' || ${lastError.slice(0, 200)} || ')' END`,
    }))
    .where('merchant_id', '=', merchantId)
    .where(sameSettings(settingsVersion))
    .where('disabled_at', 'is', null)
    .where((eb) => eb.or([eb('failing_since', 'is', null), due]))
    .returning(['disabled_at', 'disabled_reason'])
    .executeTakeFirst();
  return row?.disabled_at ? { disabledAt: row.disabled_at, reason: row.disabled_reason ?? '' } : undefined;
}

/**
 * A delivered attempt: the endpoint is no longer failing (a write only when it was), for the settings
 * it was sent with only (as recordEndpointFailure).
 */
export async function recordEndpointDelivered(
  db: Executor,
  merchantId: string,
  settingsVersion: string,
): Promise<void> {
  await db
    .updateTable('merchant_webhooks')
    .set({ failing_since: null })
    .where('merchant_id', '=', merchantId)
    .where(sameSettings(settingsVersion))
    .where('failing_since', 'is not', null)
    .execute();
}

/** The row still holds the settings read as `settingsVersion` (compared as timestamps, to the microsecond). */
function sameSettings(settingsVersion: string) {
  return sql<boolean>`merchant_webhooks.updated_at = ${settingsVersion}::timestamptz`;
}

/** Endpoints disabled now, for the `gateway_webhooks_disabled` gauge. */
export async function countDisabledWebhooks(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('merchant_webhooks')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('disabled_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
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
