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
