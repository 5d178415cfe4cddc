import { createCipheriv, randomBytes } from 'node:crypto';
import type { KeyRingEntry } from '../../src/shared/secrets/key-ring-text.js';

/**
 * A secret sealed as the service sealed it before the column was bound (`v1`: AES-256-GCM with only
 * `merchant:<id>` as associated data), for tests of the migration to the current form.
 */
export function sealInFormerForm(entry: KeyRingEntry, plain: string, merchantId: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', entry.key, nonce);
  cipher.setAAD(Buffer.from(`merchant:${merchantId.toLowerCase()}`, 'utf8'));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1.${entry.kid}.${nonce.toString('base64url')}.${body.toString('base64url')}`;
}
