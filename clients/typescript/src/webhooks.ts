import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks verification (docs/interface.md, "Completion webhooks"), against several secrets:
 * during a change of webhook secret, the old and the new one both verify until the old is dropped. After
 * webhooks/rotateSecret the service itself sends both signatures for 24 h, so one secret is enough.
 */

export interface WebhookHeaders {
  'webhook-id'?: string | null;
  'webhook-timestamp'?: string | null;
  'webhook-signature'?: string | null;
}

export interface VerifyWebhookOptions {
  /** `whsec_…` secrets; any one that verifies is enough. */
  secrets: readonly string[];
  headers: WebhookHeaders | Headers | Record<string, string | string[] | undefined>;
  /** The body exactly as received, before any JSON parsing. */
  rawBody: string | Uint8Array;
  /** Seconds a webhook-timestamp may be from the clock (default 300). */
  toleranceSeconds?: number;
  /** Epoch ms (default Date.now()). */
  now?: number;
}

export type WebhookEvent =
  | {
      type: 'job.completed' | 'job.failed' | 'job.cancelled';
      timestamp: string;
      data: Record<string, unknown> & { jobId: string; state: string };
    }
  | { type: 'webhook.test'; timestamp: string; data: { merchantId: string; message: string } };

function header(headers: VerifyWebhookOptions['headers'], name: keyof WebhookHeaders): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | null | undefined>)[name];
  return Array.isArray(value) ? value[0] : (value ?? undefined);
}

/** The event when the request is ours and recent, else null. */
export function verifyWebhook(options: VerifyWebhookOptions): WebhookEvent | null {
  const id = header(options.headers, 'webhook-id');
  const timestamp = header(options.headers, 'webhook-timestamp');
  const signatures = header(options.headers, 'webhook-signature');
  if (!id || !timestamp || !signatures || !/^\d+$/.test(timestamp)) return null;
  const now = options.now ?? Date.now();
  if (Math.abs(now / 1000 - Number(timestamp)) > (options.toleranceSeconds ?? 300)) return null;
  const body = typeof options.rawBody === 'string' ? Buffer.from(options.rawBody, 'utf8') : options.rawBody;
  const given = signatures
    .split(' ')
    .map((entry) => entry.split(','))
    .filter(([version]) => version === 'v1')
    .map(([, signature]) => Buffer.from(signature ?? '', 'base64'));
  const verified = options.secrets.some((secret) => {
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
    return given.some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected));
  });
  return verified ? (JSON.parse(Buffer.from(body).toString('utf8')) as WebhookEvent) : null;
}
