import { randomBytes } from 'node:crypto';

/**
 * The text form of a key ring, `SECRETS_KEYS=kid:base64key,kid:base64key,...`: what config.ts parses
 * and what the development ring file and the test and bench runs write. Kept apart from the sealer so
 * that the configuration can check a ring without building one.
 */

/** One key of the ring: a short name stored with every value it seals, and 32 bytes of AES-256 key. */
export interface KeyRingEntry {
  kid: string;
  key: Buffer;
}

const KEY_BYTES = 32;
const KID = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The ring's keys in order (the first seals), or why the text is not a ring. Never echoes a key. */
export function parseKeyRing(text: string): { ok: true; keys: KeyRingEntry[] } | { ok: false; reason: string } {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) return { ok: false, reason: 'must name at least one key: kid:base64key,...' };
  const keys: KeyRingEntry[] = [];
  for (const [index, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const kid = colon < 0 ? '' : entry.slice(0, colon);
    const encoded = colon < 0 ? '' : entry.slice(colon + 1);
    const where = `key ${index + 1}${KID.test(kid) ? ` ("${kid}")` : ''}`;
    if (!KID.test(kid)) {
      return { ok: false, reason: `${where}: must be kid:base64key, the kid 1 to 32 of A-Z a-z 0-9 _ -` };
    }
    if (!BASE64.test(encoded)) return { ok: false, reason: `${where}: the key is not base64` };
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== KEY_BYTES) {
      return {
        ok: false,
        reason: `${where}: the key is ${key.length} bytes, must be ${KEY_BYTES} (openssl rand -base64 32)`,
      };
    }
    if (keys.some((known) => known.kid === kid)) return { ok: false, reason: `${where}: kid used twice` };
    keys.push({ kid, key });
  }
  return { ok: true, keys };
}

/** A new one-key ring as text, for development and test runs: `<kid>:<32 random bytes as base64>`. */
export function generateKeyRingText(kid: string): string {
  return `${kid}:${randomBytes(KEY_BYTES).toString('base64')}`;
}
