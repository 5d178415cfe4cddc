import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BodyBoundRequest,
  parseHash,
  parseSignatureHeader,
  signatureHeaderValue,
  signMessage,
  verifyBodyBound,
  verifySignature,
} from '../../src/api/auth/signature.js';
import { type SignedTriple, urlBindingKey } from '../../src/api/auth/url-signature-binding.js';
import { requestFingerprint, signatureReplayRecordKey } from '../../src/api/cancellations/idempotency.js';
import { timestampDigits } from '../../src/shared/wire-rules.js';

// Every record keyed on a signature (the v2 replay record, the v1 URL binding, the idempotency
// fingerprint) is keyed on the signature as parsed: every spelling the parsers accept of one request
// names one record, and two different requests never share one.

const PREFIX = 'test';
const RUNS = { numRuns: 300 };

const merchantIds = fc.uuid({ version: 4 });
const secrets = fc.string({ minLength: 1, maxLength: 40 });
const timestamps = fc.nat({ max: Number.MAX_SAFE_INTEGER });
const digests = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes));
const requests: fc.Arbitrary<BodyBoundRequest> = fc.record({
  method: fc.constantFrom('GET', 'POST', 'post'),
  pathWithQuery: fc.constantFrom(
    '/api/v1/integration/rewards/bulkCancelByQuery',
    '/api/v1/integration/rewards/bulkCancel',
    '/betSlip?merchantId=m&timestamp=1',
  ),
  body: fc.oneof(fc.string(), fc.uint8Array({ maxLength: 64 })),
});

/** Upper-cases the characters whose mask bit is set: every mix of cases of `text`. */
function mixCase(text: string, mask: boolean[]): string {
  return [...text].map((char, index) => (mask[index % mask.length] ? char.toUpperCase() : char)).join('');
}
const caseMasks = fc.array(fc.boolean(), { minLength: 1, maxLength: 64 });

/** Every X-Signature spelling the parser accepts of (t, digest): zeros before t, hex case, spaces around. */
const headerSpellings = fc.record({
  zeros: fc.nat({ max: 15 }),
  mask: caseMasks,
  before: fc.constantFrom('', ' ', '\t', '  '),
  after: fc.constantFrom('', ' ', '\t', '  '),
});
function spellHeader(
  canonical: string,
  spelling: { zeros: number; mask: boolean[]; before: string; after: string },
): string {
  const [, t, hex] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(canonical) as RegExpExecArray;
  const paddedT = (t as string).padStart(Math.min(16, (t as string).length + spelling.zeros), '0');
  return `${spelling.before}t=${paddedT},v1=${mixCase(hex as string, spelling.mask)}${spelling.after}`;
}

/** Every v1 `hash` spelling the verifier accepts of a digest: hex case, some or all leading zeros dropped. */
const hashSpellings = fc.record({ dropZeros: fc.nat({ max: 64 }), mask: caseMasks });
function spellHash(digest: Buffer, spelling: { dropZeros: number; mask: boolean[] }): string {
  const hex = digest.toString('hex');
  const leadingZeros = /^0*/.exec(hex)?.[0].length ?? 0;
  // A digest of 32 zero bytes keeps at least one digit: `hash` is 1 to 64 hex characters.
  const dropped = Math.min(spelling.dropZeros, leadingZeros, 63);
  return mixCase(hex.slice(dropped), spelling.mask);
}

/** A digest with leading zero bytes, so that dropped zeros are exercised often, not 1 time in 16. */
const digestsWithLeadingZeros = fc
  .tuple(fc.nat({ max: 32 }), digests)
  .map(([zeros, bytes]) => Buffer.concat([Buffer.alloc(zeros), bytes.subarray(zeros)]));

describe('the version-2 replay record key', () => {
  it('is one key for every spelling of one X-Signature the parser accepts (hex case, zeros before t, spaces)', () => {
    fc.assert(
      fc.property(merchantIds, timestamps, digests, headerSpellings, (merchantId, t, digest, spelling) => {
        const canonical = { timestamp: t, digest };
        const spelled = parseSignatureHeader(spellHeader(`t=${t},v1=${digest.toString('hex')}`, spelling));
        expect(spelled).not.toBeNull();
        expect(signatureReplayRecordKey(PREFIX, merchantId, spelled as NonNullable<typeof spelled>)).toBe(
          signatureReplayRecordKey(PREFIX, merchantId, canonical),
        );
      }),
      RUNS,
    );
  });

  it('is one key for every spelling of a real signed request, each of which verifies', () => {
    fc.assert(
      fc.property(
        merchantIds,
        secrets,
        timestamps,
        requests,
        headerSpellings,
        (merchantId, secret, t, request, spelling) => {
          const sent = signatureHeaderValue(secret, t, request);
          const canonical = parseSignatureHeader(sent) as NonNullable<ReturnType<typeof parseSignatureHeader>>;
          const respelled = parseSignatureHeader(spellHeader(sent, spelling));
          expect(respelled).not.toBeNull();
          const header = respelled as NonNullable<typeof respelled>;
          expect(verifyBodyBound(header, request, secret)).toBe(true);
          expect(signatureReplayRecordKey(PREFIX, merchantId, header)).toBe(
            signatureReplayRecordKey(PREFIX, merchantId, canonical),
          );
        },
      ),
      RUNS,
    );
  });

  it('differs for two signatures that differ in merchant, t or digest', () => {
    const signatures = fc.record({ merchantId: merchantIds, timestamp: timestamps, digest: digests });
    fc.assert(
      fc.property(signatures, signatures, fc.nat({ max: 2 }), (a, other, changed) => {
        // One part changed at a time (the hardest case), or all at random.
        const b = [
          { ...a, merchantId: other.merchantId },
          { ...a, timestamp: other.timestamp },
          { ...a, digest: other.digest },
        ][changed] as typeof a;
        fc.pre(a.merchantId !== b.merchantId || a.timestamp !== b.timestamp || !a.digest.equals(b.digest));
        expect(signatureReplayRecordKey(PREFIX, a.merchantId, a)).not.toBe(
          signatureReplayRecordKey(PREFIX, b.merchantId, b),
        );
      }),
      RUNS,
    );
  });

  it('differs for two different requests (t, method, path or body) signed by one merchant', () => {
    // The second request takes each part from the first or from another: often one part differs, not all.
    const parts = fc.record({ t: fc.boolean(), method: fc.boolean(), path: fc.boolean(), body: fc.boolean() });
    fc.assert(
      fc.property(
        merchantIds,
        secrets,
        fc.tuple(timestamps, timestamps),
        fc.tuple(requests, requests),
        parts,
        (merchantId, secret, [ta, other], [ra, ro], keep) => {
          const tb = keep.t ? ta : other;
          const rb = {
            method: keep.method ? ra.method : ro.method,
            pathWithQuery: keep.path ? ra.pathWithQuery : ro.pathWithQuery,
            body: keep.body ? ra.body : ro.body,
          };
          const sameBody = Buffer.from(ra.body).equals(Buffer.from(rb.body));
          fc.pre(
            ta !== tb ||
              ra.method.toUpperCase() !== rb.method.toUpperCase() ||
              ra.pathWithQuery !== rb.pathWithQuery ||
              !sameBody,
          );
          const a = parseSignatureHeader(signatureHeaderValue(secret, ta, ra)) as NonNullable<
            ReturnType<typeof parseSignatureHeader>
          >;
          const b = parseSignatureHeader(signatureHeaderValue(secret, tb, rb)) as NonNullable<
            ReturnType<typeof parseSignatureHeader>
          >;
          expect(signatureReplayRecordKey(PREFIX, merchantId, a)).not.toBe(
            signatureReplayRecordKey(PREFIX, merchantId, b),
          );
        },
      ),
      RUNS,
    );
  });
});

describe('the version-1 URL binding key', () => {
  it('is one key for every spelling of one hash the verifier accepts (hex case, leading zeros dropped)', () => {
    fc.assert(
      fc.property(
        merchantIds,
        timestamps,
        digestsWithLeadingZeros,
        hashSpellings,
        (merchantId, timestamp, digest, spelling) => {
          const parsed = parseHash(spellHash(digest, spelling));
          expect(parsed).not.toBeNull();
          const spelled: SignedTriple = { merchantId, timestamp, digest: parsed as Buffer };
          expect(urlBindingKey(PREFIX, spelled)).toBe(urlBindingKey(PREFIX, { merchantId, timestamp, digest }));
        },
      ),
      RUNS,
    );
  });

  it('is one key for every spelling of a real signed triple (timestamp as a number or as digits, zero-padded or not)', () => {
    fc.assert(
      fc.property(
        merchantIds,
        secrets,
        timestamps,
        fc.nat({ max: 15 }),
        fc.boolean(),
        hashSpellings,
        (merchantId, secret, timestamp, zeros, asNumber, spelling) => {
          // The digits the merchant signed: zero-padded digits are a string on the wire; a number has none.
          const digits = `${timestamp}`.padStart(Math.min(16, `${timestamp}`.length + zeros), '0');
          const sentTimestamp: number | string = asNumber ? timestamp : digits;
          const signedText = timestampDigits(sentTimestamp) as string;
          const hash = spellHash(Buffer.from(signMessage(merchantId, signedText, secret), 'hex'), spelling);
          expect(verifySignature(merchantId, signedText, hash, secret)).toBe(true);
          const canonical = {
            merchantId,
            timestamp,
            digest: Buffer.from(signMessage(merchantId, signedText, secret), 'hex'),
          };
          const asParsed = { merchantId, timestamp: Number(signedText), digest: parseHash(hash) as Buffer };
          expect(urlBindingKey(PREFIX, asParsed)).toBe(urlBindingKey(PREFIX, canonical));
        },
      ),
      RUNS,
    );
  });

  it('differs for two triples that differ in merchant, timestamp or digest', () => {
    const triples = fc.record({ merchantId: merchantIds, timestamp: timestamps, digest: digests });
    fc.assert(
      fc.property(triples, triples, fc.nat({ max: 2 }), (a, other, changed) => {
        const b = [
          { ...a, merchantId: other.merchantId },
          { ...a, timestamp: other.timestamp },
          { ...a, digest: other.digest },
        ][changed] as SignedTriple;
        fc.pre(a.merchantId !== b.merchantId || a.timestamp !== b.timestamp || !a.digest.equals(b.digest));
        expect(urlBindingKey(PREFIX, a)).not.toBe(urlBindingKey(PREFIX, b));
      }),
      RUNS,
    );
  });
});

describe('the idempotency fingerprint', () => {
  const operations = fc.constantFrom('cancel', 'bulkCancel', 'bulkCancelByQuery');
  // Few values, so that equal and nearly equal requests (one entry more, another case) come up often.
  const identifiers = fc.constantFrom('p-1', 'p-2', 'P-1', 'p-1 ', '€');
  /** The validated fields of a cancel route, signing fields aside. */
  const cancelFields = fc.record(
    {
      playerIds: fc.array(identifiers, { minLength: 1, maxLength: 5 }),
      externalIds: fc.array(identifiers, { minLength: 1, maxLength: 5 }),
      externalId: identifiers,
      rewardConfigurationId: fc.constantFrom(
        '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b',
        '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
      ),
      dryRun: fc.boolean(),
    },
    { requiredKeys: [] },
  );
  const fieldNames = fc.constantFrom(
    undefined,
    'playerIds',
    'externalIds',
    'externalId',
    'rewardConfigurationId',
    'dryRun',
  ) as fc.Arbitrary<'playerIds' | 'externalIds' | 'externalId' | 'rewardConfigurationId' | 'dryRun' | undefined>;
  /** What makes two requests the same: lists are sets, absent and null alike. */
  function meaning(fields: Record<string, unknown>): string {
    const entries = Object.entries(fields)
      .filter(([, value]) => value !== undefined && value !== null)
      .map(([key, value]): [string, unknown] => [key, Array.isArray(value) ? [...new Set(value)].sort() : value])
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return JSON.stringify(entries);
  }

  it('is the same for every spelling of the signed fields (timestamp, hash, merchantId case)', () => {
    fc.assert(
      fc.property(
        operations,
        cancelFields,
        merchantIds,
        timestamps,
        fc.nat({ max: 15 }),
        fc.boolean(),
        digestsWithLeadingZeros,
        hashSpellings,
        (operation, fields, merchantId, timestamp, zeros, asNumber, digest, spelling) => {
          const digits = `${timestamp}`.padStart(Math.min(16, `${timestamp}`.length + zeros), '0');
          const spelled = {
            ...fields,
            merchantId: merchantId.toUpperCase(),
            timestamp: asNumber ? timestamp : digits,
            hash: spellHash(digest, spelling),
          };
          const canonical = { ...fields, merchantId, timestamp, hash: digest.toString('hex') };
          expect(requestFingerprint(operation, spelled)).toBe(requestFingerprint(operation, canonical));
        },
      ),
      RUNS,
    );
  });

  it('differs for two requests with different fields or on different routes', () => {
    fc.assert(
      fc.property(operations, operations, cancelFields, cancelFields, fieldNames, (opA, opB, a, other, changed) => {
        // The second request is the first with at most one field taken from another: the near misses.
        const b = changed === undefined ? a : { ...a, [changed]: other[changed] };
        fc.pre(opA !== opB || meaning(a) !== meaning(b));
        expect(requestFingerprint(opA, a)).not.toBe(requestFingerprint(opB, b));
      }),
      RUNS,
    );
  });
});
