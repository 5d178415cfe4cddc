import { signMessage } from '../../src/shared/signature.js';

export interface MerchantCredentials {
  id: string;
  secretKey: string;
}

/** A request body signed as a merchant would sign it: `{merchantId, timestamp, hash, ...fields}`. */
export function signedBody(
  merchant: MerchantCredentials,
  fields: Record<string, unknown> = {},
  timestamp: number = Date.now(),
): Record<string, unknown> {
  return {
    merchantId: merchant.id,
    timestamp,
    hash: signMessage(merchant.id, timestamp, merchant.secretKey),
    ...fields,
  };
}
