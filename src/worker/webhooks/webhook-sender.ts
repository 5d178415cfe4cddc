import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import {
  assertDeliverableHost,
  assertNoUserInformation,
  guardedLookup,
  RefusedAddressError,
  RefusedPortError,
  RefusedUserInformationError,
} from '../../shared/webhooks/webhook-address-guard.js';

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE: skip the internal-address checks. */
  allowPrivate: boolean;
}

export type WebhookResponse =
  | { outcome: 'answered'; status: number }
  | { outcome: 'unreachable'; error: string }
  /** The host is, or resolves to, an internal address (or the URL breaks another rule): no request was sent. */
  | { outcome: 'refused'; error: string };

/**
 * One POST of a webhook. node's own http client rather than fetch, because it takes a `lookup`: the
 * address checked against the internal ranges is the one connected to. No redirects are followed (a
 * 3xx is a failed attempt, as Standard Webhooks advises), no connection is reused, and the whole
 * attempt, connection included, is bounded by `timeoutMs`: a 2xx status line inside it is a delivery.
 */
export function sendWebhook(webhook: WebhookRequest): Promise<WebhookResponse> {
  let url: URL;
  try {
    url = new URL(webhook.url);
    assertNoUserInformation(url);
    if (!webhook.allowPrivate) assertDeliverableHost(url);
  } catch (error) {
    return Promise.resolve(failure(error));
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const request = send(url, {
      method: 'POST',
      agent: false,
      signal: AbortSignal.timeout(webhook.timeoutMs),
      ...(webhook.allowPrivate ? {} : { lookup: guardedLookup }),
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(webhook.body)),
        'user-agent': 'merchant-rewards-gateway-webhooks/1',
        ...webhook.headers,
      },
    });
    request.on('response', (response) => {
      resolve({ outcome: 'answered', status: response.statusCode ?? 0 });
      // The body is not read: only the status counts. Dropping the socket frees it at once.
      response.destroy();
    });
    request.on('error', (error) => resolve(failure(error, webhook.timeoutMs)));
    request.end(webhook.body);
  });
}

function failure(error: unknown, timeoutMs?: number): WebhookResponse {
  if (
    error instanceof RefusedAddressError ||
    error instanceof RefusedPortError ||
    error instanceof RefusedUserInformationError
  ) {
    return { outcome: 'refused', error: error.message };
  }
  const name = (error as { name?: string }).name;
  if (name === 'AbortError' || name === 'TimeoutError') {
    return { outcome: 'unreachable', error: `no answer within ${timeoutMs} ms` };
  }
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  const text = code && !message.includes(code) ? `${code}: ${message}` : message;
  return { outcome: 'unreachable', error: redactAddresses(text) };
}

/** IPv4 and IPv6 addresses (with an optional port) as socket errors print them, e.g. `connect ECONNREFUSED 10.0.0.5:443`. */
const ADDRESS = /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\[?\b[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}\b\]?(?::\d+)?/gi;

/**
 * The error stored with a delivery (and shown by the admin API) names no address: what a merchant's
 * host name resolves to, or which of our own addresses refused, is not theirs to see.
 */
export function redactAddresses(text: string): string {
  return text.replace(ADDRESS, '<address>');
}
