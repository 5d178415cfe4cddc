import { createHmac, timingSafeEqual } from 'node:crypto';

export interface VerifyingMerchant {
  id: string;
  secretKey: string;
}

/** The body's fields when it is a JSON object signed by the merchant; else the status to answer. */
export type SignedBodyVerdict = { fields: Record<string, unknown> } | { status: 400 | 401 };

/**
 * What any signed route must do before its work, and no more: parse the JSON and check the merchant
 * signature, hex HMAC-SHA256 of `merchantId` followed by the `timestamp` digits, keyed with the
 * merchant's secret (docs/interface.md), compared in constant time. Written here rather than
 * imported from src/, so that the baseline carries none of the service's code.
 */
export function verifySignedBody(text: string, merchant: VerifyingMerchant): SignedBodyVerdict {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { status: 400 };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { status: 400 };
  const fields = parsed as Record<string, unknown>;
  const { merchantId, timestamp, hash } = fields;
  if (merchantId !== merchant.id || !Number.isSafeInteger(timestamp) || typeof hash !== 'string') {
    return { status: 401 };
  }
  const expected = createHmac('sha256', merchant.secretKey).update(`${merchantId}${timestamp}`, 'utf8').digest();
  // Buffer.from stops at the first character that is not hex: a malformed hash comes out short.
  const received = Buffer.from(hash, 'hex');
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) return { status: 401 };
  return { fields };
}
