import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Config } from '../config/config.js';
import type { KeyRingEntry } from './key-ring-text.js';
import { type SecretColumn, type SecretSealer, SecretUnreadableError } from './secret-sealer.js';

/** The form new values are sealed in: the associated data names the merchant and the column. */
const VERSION = 'v2';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/**
 * `<form>.<kid>.<nonce>.<ciphertext + tag>`, both base64url: a 12-byte nonce is 16 characters, a tag
 * alone at least 22. Strict, so that a plain secret from before sealing is not mistaken for a sealed one.
 * Form `v2` binds the merchant and the column; `v1`, the form before it, the merchant only.
 */
const SEALED = /^(v[12])\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{22,})$/;

/**
 * AES-256-GCM under a ring of keys: the first key seals, every key opens, so values sealed under an
 * older key keep opening while `npm run secrets:reseal` moves them to the newest. Each value has its
 * own random 12-byte nonce, and the associated data is the merchant id and the column the value is
 * stored in: a sealed secret copied onto another merchant's row, or into another column (a webhook
 * secret into the signing-secret column), does not open there.
 *
 * The form is written in the value, so the reader never guesses: a `v1` value (merchant only, sealed
 * before the column was bound) still opens, as a plain value from before sealing still does, until
 * `npm run secrets:reseal` rewrites it as `v2`. A marker rather than trying one associated data and
 * then the other: with trial opening every value would forever open in the weaker form too.
 */
export class KeyRing implements SecretSealer {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly current: KeyRingEntry;

  constructor(entries: readonly KeyRingEntry[]) {
    const [first] = entries;
    if (!first) throw new Error('a key ring needs at least one key');
    this.current = first;
    this.keys = new Map(entries.map((entry) => [entry.kid, entry.key]));
  }

  /** The kid new values are sealed under. */
  get currentKid(): string {
    return this.current.kid;
  }

  seal(plain: string, merchantId: string, column: SecretColumn): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, nonce);
    cipher.setAAD(associatedData(VERSION, merchantId, column));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${this.current.kid}.${nonce.toString('base64url')}.${body.toString('base64url')}`;
  }

  open(sealed: string, merchantId: string, column: SecretColumn): string {
    const match = SEALED.exec(sealed);
    if (!match) throw new SecretUnreadableError('stored secret is not in the sealed format');
    const [, form, kid, nonceText, bodyText] = match as unknown as [Form, string, string, string, string];
    const key = this.keys.get(kid);
    if (!key) {
      throw new SecretUnreadableError(
        `stored secret is sealed under key "${kid}", which SECRETS_KEYS does not hold (a key dropped before the reseal finished?)`,
      );
    }
    const body = Buffer.from(bodyText, 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonceText, 'base64url'));
      decipher.setAAD(associatedData(form as Form, merchantId, column));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch (error) {
      throw new SecretUnreadableError(
        `stored secret sealed under key "${kid}" does not open for this merchant and column ${column} (altered, or copied from another row or column)`,
        { cause: error },
      );
    }
  }

  isSealed(stored: string): boolean {
    return SEALED.test(stored);
  }

  isSealedInCurrentForm(stored: string): boolean {
    const match = SEALED.exec(stored);
    return match?.[1] === VERSION && match[2] === this.current.kid;
  }
}

type Form = 'v1' | 'v2';

/** Merchant ids are UUIDs, compared without case elsewhere: the associated data is the lower-case form. */
function associatedData(form: Form, merchantId: string, column: SecretColumn): Buffer {
  const merchant = `merchant:${merchantId.toLowerCase()}`;
  return Buffer.from(form === 'v1' ? merchant : `${merchant};column:${column}`, 'utf8');
}

/**
 * The ring every process builds at start-up from its configuration. Unset is an error here too (a
 * test process started without one): a secret is never stored or read as plain text for want of a key.
 */
export function keyRingFromConfig(config: Pick<Config, 'SECRETS_KEYS'>): KeyRing {
  if (!config.SECRETS_KEYS) {
    throw new Error('SECRETS_KEYS is not set: the key ring that seals secrets at rest (docs/operations.md)');
  }
  return new KeyRing(config.SECRETS_KEYS);
}
