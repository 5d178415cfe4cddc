import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/shared/config/config.js';
import { KeyRing } from '../../src/shared/secrets/key-ring.js';
import { generateKeyRingText, type KeyRingEntry, parseKeyRing } from '../../src/shared/secrets/key-ring-text.js';
import { openStoredSecret, SecretUnreadableError } from '../../src/shared/secrets/secret-sealer.js';
import { sealInFormerForm } from '../helpers/former-sealed-form.js';

function ring(text: string): KeyRing {
  const parsed = parseKeyRing(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  return new KeyRing(parsed.keys);
}

const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('base64');
const merchant = randomUUID();
const secret = 'a-merchant-secret-of-at-least-32-characters';
const COLUMN = 'merchants.secret_key' as const;

function entry(kid: string, key: string): KeyRingEntry {
  return { kid, key: Buffer.from(key, 'base64') };
}

describe('KeyRing', () => {
  it('opens what it sealed, for the same merchant, and never stores the plain secret', () => {
    const keys = ring(`a:${keyA}`);
    const sealed = keys.seal(secret, merchant, COLUMN);
    expect(sealed).toMatch(/^v2\.a\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(secret);
    expect(keys.open(sealed, merchant, COLUMN)).toBe(secret);
    // The merchant id as associated data is case-blind, as merchant ids are everywhere else.
    expect(keys.open(sealed, merchant.toUpperCase(), COLUMN)).toBe(secret);
    expect(keys.isSealed(sealed)).toBe(true);
    expect(keys.isSealedInCurrentForm(sealed)).toBe(true);
  });

  it('uses a fresh nonce for every seal', () => {
    const keys = ring(`a:${keyA}`);
    const first = keys.seal(secret, merchant, COLUMN);
    const second = keys.seal(secret, merchant, COLUMN);
    expect(first).not.toBe(second);
    expect(first.split('.')[2]).not.toBe(second.split('.')[2]);
  });

  it("does not open a value copied onto another merchant's row", () => {
    const keys = ring(`a:${keyA}`);
    const sealed = keys.seal(secret, merchant, COLUMN);
    expect(() => keys.open(sealed, randomUUID(), COLUMN)).toThrow(SecretUnreadableError);
  });

  it('does not open a value moved to another column', () => {
    const keys = ring(`a:${keyA}`);
    const webhookSecret = keys.seal(secret, merchant, 'merchant_webhooks.secret');
    expect(keys.open(webhookSecret, merchant, 'merchant_webhooks.secret')).toBe(secret);
    expect(() => keys.open(webhookSecret, merchant, 'merchants.secret_key')).toThrow(/column merchants.secret_key/);
    expect(() => keys.open(webhookSecret, merchant, 'merchants.previous_secret_key')).toThrow(SecretUnreadableError);
    const previous = keys.seal(secret, merchant, 'merchants.previous_secret_key');
    expect(() => keys.open(previous, merchant, 'merchants.secret_key')).toThrow(SecretUnreadableError);
  });

  it('opens a value in the former form (merchant only) until it is resealed, and never relabelled', () => {
    const keys = ring(`a:${keyA}`);
    const former = sealInFormerForm(entry('a', keyA), secret, merchant);
    expect(keys.isSealed(former)).toBe(true);
    expect(keys.isSealedInCurrentForm(former)).toBe(false);
    expect(keys.open(former, merchant, COLUMN)).toBe(secret);
    expect(() => keys.open(former, randomUUID(), COLUMN)).toThrow(SecretUnreadableError);
    // The form is part of what is authenticated: a current value relabelled `v1` does not open, nor
    // a former one relabelled `v2`.
    const current = keys.seal(secret, merchant, COLUMN);
    expect(() => keys.open(current.replace(/^v2\./, 'v1.'), merchant, COLUMN)).toThrow(SecretUnreadableError);
    expect(() => keys.open(former.replace(/^v1\./, 'v2.'), merchant, COLUMN)).toThrow(SecretUnreadableError);
  });

  it('does not open a value sealed under a key the ring does not hold, and names the kid', () => {
    const sealed = ring(`old:${keyA}`).seal(secret, merchant, COLUMN);
    expect(() => ring(`new:${keyB}`).open(sealed, merchant, COLUMN)).toThrow(/key "old".*SECRETS_KEYS/);
  });

  it('does not open a tampered value', () => {
    const keys = ring(`a:${keyA}`);
    const sealed = keys.seal(secret, merchant, COLUMN);
    const body = Buffer.from(sealed.split('.')[3] as string, 'base64url');
    body[0] = (body[0] as number) ^ 1;
    const tampered = [...sealed.split('.').slice(0, 3), body.toString('base64url')].join('.');
    expect(() => keys.open(tampered, merchant, COLUMN)).toThrow(SecretUnreadableError);
    // Same key id, another key: the tag does not match either.
    expect(() => ring(`a:${keyB}`).open(sealed, merchant, COLUMN)).toThrow(SecretUnreadableError);
  });

  it('seals under the first key and opens under every key of the ring', () => {
    const old = ring(`a:${keyA}`).seal(secret, merchant, COLUMN);
    const rotated = ring(`b:${keyB},a:${keyA}`);
    expect(rotated.open(old, merchant, COLUMN)).toBe(secret);
    expect(rotated.isSealedInCurrentForm(old)).toBe(false);
    const fresh = rotated.seal(secret, merchant, COLUMN);
    expect(fresh.startsWith('v2.b.')).toBe(true);
    expect(rotated.isSealedInCurrentForm(fresh)).toBe(true);
  });

  it('uses a value stored before sealing as it is, and nothing else', () => {
    const keys = ring(`a:${keyA}`);
    expect(keys.isSealed('a-plain-legacy-secret')).toBe(false);
    expect(openStoredSecret(keys, 'a-plain-legacy-secret', merchant, COLUMN)).toBe('a-plain-legacy-secret');
    // Something in the sealed format that does not open is an error, never taken as a plain secret.
    const foreign = ring(`a:${keyB}`).seal(secret, merchant, COLUMN);
    expect(() => openStoredSecret(keys, foreign, merchant, COLUMN)).toThrow(SecretUnreadableError);
  });
});

describe('parseKeyRing', () => {
  it('reads kid:base64key entries in order', () => {
    const parsed = parseKeyRing(` b:${keyB} , a:${keyA}`);
    expect(parsed.ok && parsed.keys.map((key) => key.kid)).toEqual(['b', 'a']);
    expect(parseKeyRing(generateKeyRingText('dev-1_x')).ok).toBe(true);
  });

  it.each([
    ['', /at least one key/],
    [`${keyA}`, /key 1: must be kid:base64key/],
    [`a b:${keyA}`, /key 1: must be kid:base64key/],
    [`${'k'.repeat(33)}:${keyA}`, /key 1: must be kid:base64key/],
    ['a:not base64!', /key 1 \("a"\): the key is not base64/],
    [`a:${randomBytes(16).toString('base64')}`, /key 1 \("a"\): the key is 16 bytes, must be 32/],
    [`a:${keyA},a:${keyB}`, /key 2 \("a"\): kid used twice/],
  ])('refuses %j', (text, reason) => {
    const parsed = parseKeyRing(text);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toMatch(reason);
  });
});

describe('SECRETS_KEYS in the configuration', () => {
  const required = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/rewards', REDIS_URL: 'redis://127.0.0.1:6379' };

  function errorOf(env: Record<string, string>): string {
    try {
      loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    }
    throw new Error('loadConfig accepted the environment');
  }

  it('is required with NODE_ENV=production', () => {
    expect(errorOf({ ...required, NODE_ENV: 'production' })).toMatch(/SECRETS_KEYS: required with NODE_ENV=production/);
    expect(errorOf({ ...required, NODE_ENV: 'production', SECRETS_KEYS: ' ' })).toMatch(/SECRETS_KEYS: required/);
    expect(loadConfig({ ...required, NODE_ENV: 'production', SECRETS_KEYS: `a:${keyA}` }).SECRETS_KEYS).toHaveLength(1);
  });

  it('refuses a malformed ring with the entry at fault, without echoing a key', () => {
    const short = randomBytes(31).toString('base64');
    const message = errorOf({ ...required, SECRETS_KEYS: `a:${keyA},b:${short}` });
    expect(message).toMatch(/SECRETS_KEYS: key 2 \("b"\): the key is 31 bytes/);
    expect(message).not.toContain(short);
    expect(message).not.toContain(keyA);
  });

  it('parses the ring into its keys, the first one first', () => {
    const config = loadConfig({ ...required, SECRETS_KEYS: `b:${keyB},a:${keyA}` });
    expect(config.SECRETS_KEYS?.map((key) => key.kid)).toEqual(['b', 'a']);
    expect(config.SECRETS_KEYS?.[0]?.key.equals(Buffer.from(keyB, 'base64'))).toBe(true);
  });
});
