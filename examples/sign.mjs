#!/usr/bin/env node
// Signs and sends two merchant requests (readAll, then cancel) with the Node.js standard library only
// (Node 18 or newer, for fetch).
//
//   node examples/sign.mjs [--base-url http://localhost:3000] [--merchant-id ID] [--secret KEY]
//                          [--external-id demo-reward-1]
//
// Without flags it is the demo merchant that `npm start` / `npm run seed` loads. The signature is
// HMAC-SHA256, keyed with the merchant's secret, of merchantId followed by timestamp (epoch
// milliseconds, decimal digits, no separator), as lower-case hex. It covers nothing else: not the
// body, the path or the method (see docs/interface.md, "Signing").

import { createHmac } from 'node:crypto';
import { parseArgs } from 'node:util';

const DEMO_MERCHANT_ID = '00000000-0000-4000-8000-000000000001';
const DEMO_SECRET = 'demo-secret-key-change-me';

// The test vector of docs/interface.md: if this fails, the signing below is wrong.
const VECTOR = {
  merchantId: DEMO_MERCHANT_ID,
  secret: DEMO_SECRET,
  timestamp: 1763679600000,
  hash: '3ccacfc209e852fb256c6572b2ea27b169d22dd9f1eb5c3a1dd6b446cef5bc78',
};

function sign(merchantId, secret, timestamp) {
  return createHmac('sha256', secret).update(`${merchantId}${timestamp}`, 'utf8').digest('hex');
}

function signedBody(merchantId, secret, fields = {}) {
  const timestamp = Date.now();
  return JSON.stringify({ merchantId, timestamp, hash: sign(merchantId, secret, timestamp), ...fields });
}

async function post(url, body) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string', default: 'http://localhost:3000' },
    'merchant-id': { type: 'string', default: DEMO_MERCHANT_ID },
    secret: { type: 'string', default: DEMO_SECRET },
    'external-id': { type: 'string', default: 'demo-reward-1' },
  },
});

if (sign(VECTOR.merchantId, VECTOR.secret, VECTOR.timestamp) !== VECTOR.hash) {
  console.error('signature test vector: MISMATCH');
  process.exit(1);
}
console.log('signature test vector: ok');

const base = values['base-url'].replace(/\/+$/, '');
const merchantId = values['merchant-id'];

const readAll = await post(
  `${base}/api/v1/integration/reward-configurations/readAll`,
  signedBody(merchantId, values.secret),
);
console.log(`readAll: HTTP ${readAll.status}`);
console.log(readAll.text);

const cancel = await post(
  `${base}/api/v1/integration/rewards/cancel`,
  signedBody(merchantId, values.secret, { externalId: values['external-id'] }),
);
console.log(`cancel: HTTP ${cancel.status} X-Job-Id: ${cancel.headers.get('x-job-id') ?? '-'}`);
if (cancel.text) console.log(cancel.text);
