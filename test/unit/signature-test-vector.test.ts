import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  parseSignatureHeader,
  signatureHeaderValue,
  signMessage,
  verifyBodyBound,
  verifySignature,
} from '../../src/api/auth/signature.js';

// docs/interface.md publishes a test vector for integrators; it must be what our code computes, and the
// vector file the examples check themselves against must hold it.
const interfaceDoc = readFileSync(fileURLToPath(new URL('../../docs/interface.md', import.meta.url)), 'utf8');
const vectorFile = readFileSync(
  fileURLToPath(new URL('../../docs/signing-test-vectors.json', import.meta.url)),
  'utf8',
);
const examples = ['sign.py', 'sign.mjs'].map((file) =>
  readFileSync(fileURLToPath(new URL(`../../examples/${file}`, import.meta.url)), 'utf8'),
);

function vectorValue(input: string): string {
  const match = new RegExp(`^\\| ${input} \\| \`([^\`]+)\` \\|$`, 'm').exec(interfaceDoc);
  if (!match?.[1]) throw new Error(`docs/interface.md has no test vector row '${input}'`);
  return match[1];
}

describe('the signature test vector of docs/interface.md', () => {
  const merchantId = vectorValue('merchantId');
  const secretKey = vectorValue('secret key');
  const timestamp = vectorValue('timestamp');
  const hash = vectorValue('hash');

  it('is the hash src/api/auth/signature.ts computes, over the message the table shows', () => {
    expect(vectorValue('signed message')).toBe(`${merchantId}${timestamp}`);
    expect(signMessage(merchantId, Number(timestamp), secretKey)).toBe(hash);
    expect(verifySignature(merchantId, timestamp, hash, secretKey)).toBe(true);
  });

  it('appears unchanged in the openssl example and in the vector file both examples/ scripts check', () => {
    expect(interfaceDoc).toContain(`SHA2-256(stdin)= ${hash}`);
    expect(vectorFile).toContain(`"hash": "${hash}"`);
    expect(vectorFile).toContain(`"timestamp": ${timestamp}`);
    for (const source of examples) expect(source).toContain('docs/signing-test-vectors.json');
  });
});

describe('the version 2 test vector of docs/interface.md', () => {
  const t = vectorValue('t');
  const method = vectorValue('method');
  const pathWithQuery = vectorValue('path with query');
  const body = vectorValue('raw body');
  const header = vectorValue('X-Signature');

  it('is the header src/api/auth/signature.ts computes with the secret of the first table', () => {
    const secretKey = vectorValue('secret key');
    expect(signatureHeaderValue(secretKey, Number(t), { method, pathWithQuery, body })).toBe(header);
    const parsed = parseSignatureHeader(header);
    expect(parsed && verifyBodyBound(parsed, { method, pathWithQuery, body }, secretKey)).toBe(true);
    // Its body is the one a merchant would send: signed by the first table's rule, at the same time.
    expect(JSON.parse(body)).toMatchObject({
      merchantId: vectorValue('merchantId'),
      timestamp: Number(t),
      hash: vectorValue('hash'),
    });
  });

  it('appears unchanged in the openssl example and in both examples/ scripts', () => {
    const digest = header.split('v1=')[1] as string;
    expect(interfaceDoc).toContain(`printf '%s' '${t}.${method}.${pathWithQuery}.${body}'`);
    expect(interfaceDoc).toContain(`SHA2-256(stdin)= ${digest}`);
    expect(vectorFile).toContain(`"xSignature": "${header}"`);
    expect(vectorFile).toContain(`"pathWithQuery": "${pathWithQuery}"`);
    for (const source of examples) expect(source).toContain('docs/signing-test-vectors.json');
  });
});
