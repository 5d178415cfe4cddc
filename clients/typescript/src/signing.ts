import { createHmac } from 'node:crypto';

/**
 * The merchant signature (docs/interface.md, "Signing"; vectors in docs/signing-test-vectors.json).
 * v1: hash = hex HMAC-SHA256(secret, merchantId followed by the timestamp's decimal digits).
 * v2: X-Signature = `t=<t>,v1=` + hex HMAC-SHA256(secret, `<t>.<METHOD>.<path with query>.` + the raw body bytes).
 */

/** The signed fields every request body carries; `timestamp` is an integer, written as its digits. */
export function signV1(merchantId: string, secret: string, timestamp: number | string): string {
  return createHmac('sha256', secret).update(`${merchantId}${timestamp}`, 'utf8').digest('hex');
}

/** The `X-Signature` value over exactly the bytes that are sent. */
export function signatureHeader(
  secret: string,
  t: number,
  method: string,
  pathWithQuery: string,
  body: Uint8Array | string,
): string {
  const digest = createHmac('sha256', secret)
    .update(`${t}.${method.toUpperCase()}.${pathWithQuery}.`, 'utf8')
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest('hex');
  return `t=${t},v1=${digest}`;
}
