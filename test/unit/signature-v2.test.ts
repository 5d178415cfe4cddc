import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseSignatureHeader, signatureHeaderValue, verifyBodyBound } from '../../src/api/auth/signature.js';

const secret = 'merchant-secret-key';
const t = 1_763_679_600_000;
const request = {
  method: 'POST',
  pathWithQuery: '/api/v1/integration/rewards/bulkCancel',
  body: '{"merchantId":"m","ids":["a"]}',
};

/** The rule written out independently of src/api/auth/signature.ts. */
function reference(message: string | Buffer, key = secret): string {
  return createHmac('sha256', key).update(message).digest('hex');
}

function parsed(value: string) {
  const header = parseSignatureHeader(value);
  if (!header) throw new Error(`did not parse: ${value}`);
  return header;
}

describe('signatureHeaderValue', () => {
  it('is t=<t>,v1=<hex HMAC-SHA256 of "<t>.<METHOD>.<path with query>.<body>">', () => {
    expect(signatureHeaderValue(secret, t, request)).toBe(
      `t=${t},v1=${reference(`${t}.POST./api/v1/integration/rewards/bulkCancel.{"merchantId":"m","ids":["a"]}`)}`,
    );
  });

  it('upper-cases the method and signs an empty body as nothing after the last dot', () => {
    const value = signatureHeaderValue(secret, t, { method: 'get', pathWithQuery: '/betSlip?a=1&b=2', body: '' });
    expect(value).toBe(`t=${t},v1=${reference(`${t}.GET./betSlip?a=1&b=2.`)}`);
  });

  it('signs body bytes as they are, and a string body as its UTF-8 bytes', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0x7d]);
    const prefix = Buffer.from(`${t}.POST./p.`);
    expect(signatureHeaderValue(secret, t, { method: 'POST', pathWithQuery: '/p', body: new Uint8Array(bytes) })).toBe(
      `t=${t},v1=${reference(Buffer.concat([prefix, bytes]))}`,
    );
    expect(signatureHeaderValue(secret, t, { method: 'POST', pathWithQuery: '/p', body: '€' })).toBe(
      `t=${t},v1=${reference(Buffer.concat([prefix, Buffer.from([0xe2, 0x82, 0xac])]))}`,
    );
  });
});

describe('parseSignatureHeader', () => {
  const hex = 'a'.repeat(64);

  it('takes t=<digits>,v1=<64 hex>, hex in either case, surrounding spaces trimmed', () => {
    expect(parseSignatureHeader(`t=${t},v1=${hex}`)).toEqual({ timestamp: t, digest: Buffer.from(hex, 'hex') });
    expect(parseSignatureHeader(` t=0,v1=${hex.toUpperCase()} `)?.timestamp).toBe(0);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['in the other order', `v1=${hex},t=${t}`],
    ['with a space after the comma', `t=${t}, v1=${hex}`],
    ['without t', `v1=${hex}`],
    ['without v1', `t=${t}`],
    ['with 63 hex digits', `t=${t},v1=${hex.slice(1)}`],
    ['with 65 hex digits', `t=${t},v1=${hex}a`],
    ['with a non-hex digit', `t=${t},v1=${hex.slice(1)}g`],
    ['with a negative t', `t=-1,v1=${hex}`],
    ['with a fractional t', `t=1.5,v1=${hex}`],
    ['with a t of 17 digits', `t=${'1'.repeat(17)},v1=${hex}`],
    ['with a t past the safe integers', `t=${'9'.repeat(16)},v1=${hex}`],
    ['with a second v1', `t=${t},v1=${hex},v1=${hex}`],
    ['with another scheme', `t=${t},v0=${hex}`],
  ])('refuses a header %s', (_, value) => {
    expect(parseSignatureHeader(value)).toBeNull();
  });
});

describe('verifyBodyBound', () => {
  const header = parsed(signatureHeaderValue(secret, t, request));

  it('accepts the request it was made for', () => {
    expect(verifyBodyBound(header, request, secret)).toBe(true);
    expect(verifyBodyBound(header, { ...request, method: 'post' }, secret)).toBe(true);
    expect(verifyBodyBound(header, { ...request, body: Buffer.from(request.body) }, secret)).toBe(true);
  });

  it.each([
    ['another method', { ...request, method: 'GET' }],
    ['another path', { ...request, pathWithQuery: '/api/v1/integration/rewards/cancel' }],
    ['an added query string', { ...request, pathWithQuery: `${request.pathWithQuery}?x=1` }],
    ['another body', { ...request, body: '{"merchantId":"m","ids":["b"]}' }],
    ['a body with a byte more', { ...request, body: `${request.body} ` }],
  ])('refuses %s', (_, other) => {
    expect(verifyBodyBound(header, other, secret)).toBe(false);
  });

  it('refuses another t, another secret, and a digest of another length', () => {
    expect(verifyBodyBound({ ...header, timestamp: t + 1 }, request, secret)).toBe(false);
    expect(verifyBodyBound(header, request, 'another-secret')).toBe(false);
    expect(verifyBodyBound({ ...header, digest: header.digest.subarray(1) }, request, secret)).toBe(false);
  });
});
