import { signatureHeaderValue } from '../../src/api/auth/signature.js';
import { buildSignedFields } from '../../src/tools/signed-request.js';

export interface MerchantCredentials {
  id: string;
  secretKey: string;
}

/**
 * A request body signed as a merchant would sign it: `{merchantId, timestamp, hash, ...fields}`,
 * built by the same function as `npm run sign`. A field given here replaces a signed one.
 */
export function signedBody(
  merchant: MerchantCredentials,
  fields: Record<string, unknown> = {},
  timestamp: number = Date.now(),
): Record<string, unknown> {
  return buildSignedFields(merchant.id, merchant.secretKey, timestamp, fields);
}

/**
 * Signature version 2: the `X-Signature` header over exactly `body` (the string that is sent) for this
 * method and path with query, at `t` (default now), built by the service's own signing code.
 */
export function bodyBoundHeaders(
  merchant: MerchantCredentials,
  request: { method: string; pathWithQuery: string; body: string },
  options: { t?: number; secretKey?: string } = {},
): Record<string, string> {
  const t = options.t ?? Date.now();
  return { 'x-signature': signatureHeaderValue(options.secretKey ?? merchant.secretKey, t, request) };
}
