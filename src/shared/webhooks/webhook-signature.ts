import { createHmac, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets and signatures in the Standard Webhooks format
 * (https://www.standardwebhooks.com/): the secret is `whsec_` + base64 of random bytes, and a
 * signature is `v1,` + base64 of the HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`,
 * keyed with the secret's decoded bytes.
 */

const SECRET_PREFIX = 'whsec_';

/** 32 random bytes (the format asks for 24 to 64): a new secret for every webhook set. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The `webhook-signature` header value of one attempt. */
export function signWebhook(secret: string, webhookId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const digest = createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${digest}`;
}
