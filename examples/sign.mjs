#!/usr/bin/env node
// Signs and sends two merchant requests (readAll, then cancel) with the Node.js standard library only
// (Node 18 or newer, for fetch).
//
//   node examples/sign.mjs [--base-url http://localhost:3000] [--merchant-id ID] [--secret KEY]
//                          [--external-id demo-reward-1] [--v2]
//
// Without flags it is the demo merchant that `npm start` / `npm run seed` loads. The signature is
// HMAC-SHA256, keyed with the merchant's secret, of merchantId followed by timestamp (epoch
// milliseconds, decimal digits, no separator), as lower-case hex. It covers nothing else: not the
// body, the path or the method (see docs/interface.md, "Signing").
//
// --v2 (for a merchant on signature version 2) also sends the header
// X-Signature: t=<epoch ms>,v1=<hex>, HMAC-SHA256 of "<t>.<METHOD>.<path with query>.<body bytes>":
// it binds the signature to this very request (docs/interface.md, "Signature version 2").

import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const DEMO_MERCHANT_ID = '00000000-0000-4000-8000-000000000001';
const DEMO_SECRET = 'demo-secret-key-change-me';

// The test vectors every example and client checks itself against: if one fails, the signing below is wrong.
const VECTORS = JSON.parse(readFileSync(new URL('../docs/signing-test-vectors.json', import.meta.url), 'utf8'));

function sign(merchantId, secret, timestamp) {
  return createHmac('sha256', secret).update(`${merchantId}${timestamp}`, 'utf8').digest('hex');
}

/** Version 2: the X-Signature value over exactly the bytes that are sent (a string body is sent as UTF-8). */
function signatureHeader(secret, timestamp, method, pathWithQuery, body) {
  const digest = createHmac('sha256', secret)
    .update(`${timestamp}.${method}.${pathWithQuery}.`, 'utf8')
    .update(body, 'utf8')
    .digest('hex');
  return `t=${timestamp},v1=${digest}`;
}

function signedBody(merchantId, secret, timestamp, fields = {}) {
  return JSON.stringify({ merchantId, timestamp, hash: sign(merchantId, secret, timestamp), ...fields });
}

async function post(url, body, secret, timestamp, v2) {
  const headers = { 'content-type': 'application/json' };
  if (v2) {
    const { pathname, search } = new URL(url);
    headers['X-Signature'] = signatureHeader(secret, timestamp, 'POST', pathname + search, body);
  }
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string', default: 'http://localhost:3000' },
    'merchant-id': { type: 'string', default: DEMO_MERCHANT_ID },
    secret: { type: 'string', default: DEMO_SECRET },
    'external-id': { type: 'string', default: 'demo-reward-1' },
    v2: { type: 'boolean', default: false },
  },
});

const vectorsHold =
  VECTORS.v1.every((vector) => sign(vector.merchantId, vector.secret, vector.timestamp) === vector.hash) &&
  VECTORS.v2.every(
    (vector) =>
      signatureHeader(vector.secret, vector.t, vector.method, vector.pathWithQuery, vector.body) === vector.xSignature,
  );
if (!vectorsHold) {
  console.error('signature test vector: MISMATCH');
  process.exit(1);
}
console.log('signature test vector: ok');

const base = values['base-url'].replace(/\/+$/, '');
const merchantId = values['merchant-id'];

let now = Date.now();
const readAll = await post(
  `${base}/api/v1/integration/reward-configurations/readAll`,
  signedBody(merchantId, values.secret, now),
  values.secret,
  now,
  values.v2,
);
console.log(`readAll: HTTP ${readAll.status}`);
console.log(readAll.text);

now = Date.now();
const cancel = await post(
  `${base}/api/v1/integration/rewards/cancel`,
  signedBody(merchantId, values.secret, now, { externalId: values['external-id'] }),
  values.secret,
  now,
  values.v2,
);
console.log(`cancel: HTTP ${cancel.status} X-Job-Id: ${cancel.headers.get('x-job-id') ?? '-'}`);
if (cancel.text) console.log(cancel.text);
