import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Executor } from '../../shared/db/client.js';
import { AppError } from '../../shared/errors/errors.js';
import { checkWebhookUrl, displayableWebhookUrl } from '../../shared/webhooks/webhook-address-guard.js';
import { type WebhookEventType, webhookEventTypes } from '../../shared/webhooks/webhook-catalogue.js';
import { generateWebhookSecret } from '../../shared/webhooks/webhook-signature.js';
import {
  deleteWebhook,
  findWebhookStatus,
  upsertWebhook,
  type WebhookStatus,
} from '../../shared/webhooks/webhooks.repository.js';
import type { AppEnv } from '../context.js';

/**
 * Setting and removing a merchant's webhook, the one way for both callers: the operator (admin API) and
 * the merchant itself (webhooks/put, webhooks/delete). The same address rules, the same validation, the
 * same audit row in the write's own transaction; only who the audit names differs (`audit`).
 */

/** Records the write in the audit log, on the write's transaction, under whoever made it. */
export type AuditWrite = (
  c: Context<AppEnv>,
  db: Executor,
  write: {
    action: string;
    target: string | null;
    before?: Record<string, unknown> | null;
    after?: Record<string, unknown> | null;
  },
) => Promise<void>;

export const webhookUrlSchema = z
  .string()
  .min(1)
  .max(2_048)
  .openapi({
    format: 'uri',
    description:
      'http or https on its default port (80 or 443), without user information (`user:password@` is refused). Loopback, private, link-local and ' +
      'every other special-purpose address (the IANA registries) are refused, when the URL is set and again, after ' +
      'resolving the host name, at every delivery (unless WEBHOOK_ALLOW_PRIVATE)',
    example: 'https://merchant.example/webhooks/rewards',
  });

export const webhookEventsSchema = z
  .array(z.enum(webhookEventTypes))
  .min(1, 'give at least one event type, or leave events out for all of them')
  .max(webhookEventTypes.length)
  .refine((events) => new Set(events).size === events.length, 'each event type at most once')
  .openapi({ uniqueItems: true });

export interface NewWebhook {
  url: string;
  events: WebhookEventType[];
  /** Shown once, in the answer that made it. */
  secret: string;
}

/** Sets the merchant's webhook with a new secret (an endpoint disabled for failing is enabled again). */
export async function applyWebhookSettings(
  c: Context<AppEnv>,
  merchantId: string,
  body: { url: string; events?: WebhookEventType[] | undefined },
  audit: AuditWrite,
  /** Run once the URL is found good, before the write (the admin route's check that the merchant exists). */
  beforeWrite?: () => Promise<unknown>,
): Promise<NewWebhook> {
  const checked = checkWebhookUrl(body.url, c.get('deps').config.WEBHOOK_ALLOW_PRIVATE);
  if (!checked.ok) throw new AppError('INVALID_REQUEST', `url: ${checked.reason}`);
  await beforeWrite?.();
  const webhook = { url: checked.url, events: body.events ?? [...webhookEventTypes], secret: generateWebhookSecret() };
  await c
    .get('deps')
    .db.transaction()
    .execute(async (trx) => {
      const before = await findWebhookStatus(trx, merchantId);
      await upsertWebhook(trx, c.get('deps').secrets, merchantId, webhook);
      await audit(c, trx, {
        action: 'webhook.put',
        target: merchantId,
        // Nothing secret in the log: no signing secret, and no user information a URL stored before it
        // was refused may still carry.
        before: before ? { url: displayableWebhookUrl(before.url), events: before.events } : null,
        after: { url: webhook.url, events: webhook.events },
      });
    });
  c.get('logger').info({ merchantId, host: new URL(webhook.url).host, events: webhook.events }, 'webhook set');
  return webhook;
}

/** Removes the merchant's webhook; false when it had none (nothing audited then). */
export async function removeWebhookSettings(
  c: Context<AppEnv>,
  merchantId: string,
  audit: AuditWrite,
): Promise<boolean> {
  const removed = await c
    .get('deps')
    .db.transaction()
    .execute(async (trx) => {
      const before = await findWebhookStatus(trx, merchantId);
      const deleted = await deleteWebhook(trx, merchantId);
      if (deleted) {
        await audit(c, trx, {
          action: 'webhook.delete',
          target: merchantId,
          before: before ? { url: displayableWebhookUrl(before.url), events: before.events } : null,
        });
      }
      return deleted;
    });
  c.get('logger').info({ merchantId, removed }, 'webhook removed');
  return removed;
}

const epochMs = (description: string) => z.number().int().nullable().openapi({ description });

/** The fields of a webhook's status answer (never its secret). */
export const webhookStatusFields = {
  url: z.string().openapi({ description: 'The URL, never with user information' }),
  events: z.array(z.enum(webhookEventTypes)),
  enabled: z
    .boolean()
    .openapi({ description: 'false once disabled for failing; setting the webhook again enables it' }),
  failingSince: epochMs(
    'Epoch milliseconds of the first failed attempt since the last delivery; null while the endpoint delivers',
  ),
  disabledAt: epochMs(
    'Epoch milliseconds: when the endpoint was disabled for failing every attempt for WEBHOOK_DISABLE_AFTER_MS; ' +
      'null while enabled. While disabled, events are recorded as dropped and not sent',
  ),
  disabledReason: z.string().nullable().openapi({
    description: 'Why it was disabled',
    example: 'every delivery failed since 2026-11-24T03:00:00Z (last: HTTP 500)',
  }),
};

export function webhookStatusAnswer(webhook: WebhookStatus) {
  return {
    url: displayableWebhookUrl(webhook.url),
    events: webhook.events,
    enabled: webhook.disabledAt === null,
    failingSince: webhook.failingSince?.getTime() ?? null,
    disabledAt: webhook.disabledAt?.getTime() ?? null,
    disabledReason: webhook.disabledReason,
  };
}
