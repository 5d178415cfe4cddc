/**
 * Where a sealed secret is stored, as `table.column`: part of what it is sealed for, so that a value
 * moved to another column does not open there.
 */
export type SecretColumn =
  | 'merchants.secret_key'
  | 'merchants.previous_secret_key'
  | 'merchant_webhooks.secret'
  | 'merchant_webhooks.previous_secret';

/**
 * What stores a secret at rest: seals it for one merchant and one column, opens what it sealed. The
 * key ring (key-ring.ts) implements it with keys from SECRETS_KEYS; a KMS can implement it later
 * without the repositories noticing.
 */
export interface SecretSealer {
  /** The sealed text to store; it opens only for the same merchant id and column. */
  seal(plain: string, merchantId: string, column: SecretColumn): string;
  /** The plain secret, or a SecretUnreadableError (unknown key, another merchant's or column's value, tampering). */
  open(sealed: string, merchantId: string, column: SecretColumn): string;
  /** Whether the text is in this sealer's format at all (a plain value stored before sealing is not). */
  isSealed(stored: string): boolean;
  /**
   * Whether the text is sealed in the form and under the key that seal now (the reseal skips those;
   * it rewrites the others, an older form included).
   */
  isSealedInCurrentForm(stored: string): boolean;
}

/**
 * A stored secret that cannot be opened. Never a reason to treat the value as plain text: the merchant
 * cannot authenticate and the error is logged (a configuration error, or a row changed behind the service).
 */
export class SecretUnreadableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SecretUnreadableError';
  }
}

/**
 * A stored secret as the service uses it. A value not in the sealed format was stored before secrets
 * were sealed: it is used as it is until `npm run secrets:reseal` seals it (docs/operations.md).
 */
export function openStoredSecret(
  sealer: SecretSealer,
  stored: string,
  merchantId: string,
  column: SecretColumn,
): string {
  return sealer.isSealed(stored) ? sealer.open(stored, merchantId, column) : stored;
}
