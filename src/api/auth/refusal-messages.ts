/**
 * What a merchant is told when its signature is refused (errorCode 2 and 3): enough to find its own
 * mistake, never a secret, a digest, or the merchant id it sent (a refusal may be logged by proxies).
 * The codes stay as they are; only the messages say which case it is (every refusal used to
 * read "Authentication failed" alike, so a merchant could not tell a wrong secret from a typo'd id).
 */

const PREFIX = 'Authentication failed';

export const authRefusal = {
  unknownMerchant: `${PREFIX}: unknown merchantId (no merchant has this id)`,
  disabledMerchant: `${PREFIX}: this merchant is disabled; ask the operator`,
  malformedHash: `${PREFIX}: hash must be 1 to 64 hex characters (the HMAC-SHA256 digest as hex)`,
  hashMismatch: (timestampText: string) =>
    `${PREFIX}: hash does not match. Sign the UTF-8 bytes of merchantId immediately followed by the timestamp ` +
    `digits as sent (here "${timestampText}"), no separator, with HMAC-SHA256 keyed with the merchant's secret, as hex`,
  /** The body wrote the timestamp as a JSON number in a spelling other than its digits (1.7636796E12, 1763679600000.0). */
  timestampSpelling: (written: string, timestampText: string) =>
    `${PREFIX}: hash does not match, and timestamp is written ${written} in the body: it is signed as its ` +
    `integer digits "${timestampText}". Send (and sign) the timestamp as an integer or a string of digits`,
  signatureHeaderMissing: `${PREFIX}: X-Signature header missing (this merchant signs with version 2)`,
  signatureHeaderMalformed: `${PREFIX}: X-Signature must be t=<epoch ms>,v1=<64 hex>`,
  signatureHeaderMismatch: (signedPrefix: string, bodyBytes: number) =>
    `${PREFIX}: X-Signature does not match. It signs "${signedPrefix}" followed by the ${bodyBytes} bytes of the ` +
    'body exactly as sent, with HMAC-SHA256 keyed with the merchant secret',
} as const;

/** Longest piece of a request echoed back in a message. */
const ECHO_MAX = 40;

export function echo(text: string, max = ECHO_MAX): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * errorCode 3 says the server's time, so a client can correct its clock (the `Date` header carries it
 * too, to the second).
 */
export function timestampExpiredMessage(
  field: 'timestamp' | 'X-Signature t',
  sent: number,
  now: number,
  window: number,
) {
  return (
    `Timestamp outside the accepted window: ${field} ${sent} is ${Math.abs(now - sent)} ms ` +
    `${sent < now ? 'behind' : 'ahead of'} the server time ${now} (epoch ms); the window is ±${window} ms`
  );
}

const JSON_TIMESTAMP_NUMBER = /"timestamp"\s*:\s*(-?[0-9][0-9.eE+-]*)/;

/**
 * How the body's JSON wrote `timestamp` when it was a number not written as plain digits
 * (`1.7636796E12` from Java's Double.toString, `1763679600000.0` from a Python float): JSON.parse
 * reads both as the integer, but the sender signed what it wrote. Null when written as digits.
 */
export function unusualTimestampSpelling(rawBody: Uint8Array): string | null {
  if (rawBody.length === 0) return null;
  const text = Buffer.from(rawBody.buffer, rawBody.byteOffset, Math.min(rawBody.length, 64 * 1024)).toString('utf8');
  const written = JSON_TIMESTAMP_NUMBER.exec(text)?.[1];
  return written !== undefined && !/^\d+$/.test(written) ? echo(written) : null;
}
