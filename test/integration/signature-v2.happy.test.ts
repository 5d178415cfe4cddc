import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseSignArgs, renderSignedRequest } from '../../src/tools/signed-request.js';
import { createMerchant, createSession } from '../helpers/fixtures.js';
import { bodyBoundHeaders, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

// A version 2 merchant signing body-bound requests as docs/interface.md tells it to: with the
// signing helper's output as printed, with its own serialisation of the body, on GET with a query.

const { env, api } = useTestContext({ api: true });

const CANCEL = '/api/v1/integration/rewards/cancel';

/** What `npm run sign -- --v2 …` prints, split into its two lines. */
function signTool(argv: string[]): { first: string; header: [string, string] } {
  const command = parseSignArgs(argv, Date.now());
  if (command.kind !== 'sign') throw new Error(`not a sign command: ${JSON.stringify(command)}`);
  const [first, headerLine] = renderSignedRequest(command.request).split('\n') as [string, string];
  const [name, value] = headerLine.split(': ') as [string, string];
  return { first, header: [name, value] };
}

describe('a version 2 merchant', () => {
  it('queues a cancel signed with the body and header `npm run sign -- --v2` prints', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const { first, header } = signTool([
      '--merchant-id',
      merchant.id,
      '--secret',
      merchant.secretKey,
      '--v2',
      '--path',
      CANCEL,
      '--body',
      JSON.stringify({ id: randomUUID() }),
    ]);
    expect(header[0]).toBe('X-Signature');
    const response = await api.post(CANCEL, first, { [header[0]]: header[1] });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-job-id')).not.toBeNull();
  });

  it('validates a token on GET /betSlip with the query string and header the tool prints', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const session = await createSession(env.db, { merchantId: merchant.id, playerId: 'player-v2' });
    const { first: query, header } = signTool([
      '--merchant-id',
      merchant.id,
      '--secret',
      merchant.secretKey,
      '--v2',
      '--path',
      '/betSlip',
      '--query',
      '--body',
      JSON.stringify({ authToken: session.token }),
    ]);
    const response = await api.get(`/betSlip?${query}`, { [header[0]]: header[1] });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ errorCode: 0, playerId: 'player-v2' });
  });

  it('is served whatever the spacing, field order and characters of the body, as long as the bytes are signed', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const fields = signedBody(merchant);
    const body = `{ "externalId" : "bonus-€-ü-${randomUUID()}",\r\n\t"hash":"${fields.hash}", "timestamp": "${fields.timestamp}", "merchantId": "${merchant.id}" }`;
    const response = await api.post(
      CANCEL,
      body,
      bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: CANCEL, body }),
    );
    expect(response.status).toBe(200);
  });

  it('accepts the digest in upper case, and a t other than the body timestamp inside the window', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const body = JSON.stringify(signedBody(merchant, { id: randomUUID() }));
    const headers = bodyBoundHeaders(
      merchant,
      { method: 'POST', pathWithQuery: CANCEL, body },
      { t: Date.now() - 120_000 },
    );
    const upper = {
      'x-signature': (headers['x-signature'] as string).replace(/v1=(.*)$/, (_, hex) => `v1=${hex.toUpperCase()}`),
    };
    expect((await api.post(CANCEL, body, upper)).status).toBe(200);
  });
});
