import { type MerchantCredentials, signedBody } from './signing.js';

/** The merchant's webhook routes (/api/v1/integration/webhooks/<name>), as a merchant calls them. */
export type WebhookRouteName =
  | 'get'
  | 'put'
  | 'delete'
  | 'rotateSecret'
  | 'deliveries'
  | 'redeliver'
  | 'recover'
  | 'test';

export const webhookRouteNames: WebhookRouteName[] = [
  'get',
  'put',
  'delete',
  'rotateSecret',
  'deliveries',
  'redeliver',
  'recover',
  'test',
];

export interface WebhookCallAnswer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** A signed POST (signature version 1) to one of the merchant's webhook routes. */
export async function webhookCall(
  baseUrl: string,
  merchant: MerchantCredentials,
  name: WebhookRouteName,
  fields: Record<string, unknown> = {},
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<WebhookCallAnswer> {
  const response = await fetch(`${baseUrl}/api/v1/integration/webhooks/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: options.body ?? JSON.stringify(signedBody(merchant, fields)),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text, headers: response.headers };
}
