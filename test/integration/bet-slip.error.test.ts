import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { signMessage } from '../../src/api/auth/signature.js';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { bet, createMerchant, createSession, type MerchantFixture } from '../helpers/fixtures.js';
import { type MerchantCredentials, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/** docs/design.md §8 and §3: token failures are 200 with errorCode 8 / 9 and nothing else. */

/** Every line the API logged, to check what it never writes. */
const logLines: string[] = [];
const { env, api } = useTestContext({
  api: {
    deps: {
      logger: createLogger({ level: 'trace', name: 'api-test' }, { write: (line: string) => logLines.push(line) }),
    },
  },
});
let merchant: MerchantFixture;
let otherMerchant: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  otherMerchant = await createMerchant(env.db);
});

const methods = [
  {
    method: 'POST',
    request: (fields: Record<string, unknown>, as: MerchantCredentials = merchant) =>
      api.post('/betSlip', signedBody(as, fields)),
  },
  {
    method: 'GET',
    request: (fields: Record<string, unknown>, as: MerchantCredentials = merchant) => {
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(signedBody(as, fields))) {
        if (value !== undefined) query.set(key, String(value));
      }
      return api.get(`/betSlip?${query}`);
    },
  },
] as const;

let playerSequence = 0;
const newPlayer = () => `player-${++playerSequence}`;

async function tokenAnswer(response: Response, errorCode: number): Promise<Record<string, unknown>> {
  expect(response.status).toBe(200);
  const body = (await response.json()) as Record<string, unknown>;
  // Only the two error fields: nothing about the player or the session leaks.
  expect(Object.keys(body).sort()).toEqual(['errorCode', 'errorMessage']);
  expect(body.errorCode).toBe(errorCode);
  expect(typeof body.errorMessage).toBe('string');
  expect((body.errorMessage as string).length).toBeGreaterThan(0);
  return body;
}

describe.each(methods)('$method /betSlip', ({ request }) => {
  it('answers 200 INVALID_TOKEN (8) with only the error fields to an unknown token', async () => {
    await tokenAnswer(await request({ authToken: `unknown-${randomBytes(8).toString('hex')}` }), 8);
  });

  it('answers a token of another merchant exactly as an unknown one', async () => {
    const theirs = await createSession(env.db, { merchantId: otherMerchant.id, playerId: newPlayer(), balance: '99' });
    const foreign = await tokenAnswer(await request({ authToken: theirs.token }), 8);
    const unknown = await tokenAnswer(await request({ authToken: 'no-such-token' }), 8);
    expect(foreign).toEqual(unknown);
    // The owner still gets the session.
    const owner = await request({ authToken: theirs.token }, otherMerchant);
    expect(await owner.json()).toMatchObject({ errorCode: 0, balance: 99 });
  });

  it('answers 200 TOKEN_EXPIRED (9) with only the error fields to an expired session', async () => {
    const expired = await createSession(env.db, {
      merchantId: merchant.id,
      playerId: newPlayer(),
      expiresAt: Date.now() - 1_000,
      player: { username: 'should-not-appear' },
      betSlip: [bet()],
    });
    await tokenAnswer(await request({ authToken: expired.token }), 9);
  });

  it('answers an expired session of another merchant as an unknown token, not as expired', async () => {
    const theirs = await createSession(env.db, {
      merchantId: otherMerchant.id,
      playerId: newPlayer(),
      expiresAt: Date.now() - 1_000,
    });
    await tokenAnswer(await request({ authToken: theirs.token }), 8);
  });

  it('does not match a token by prefix, case or digest', async () => {
    const token = `CaseToken-${randomBytes(6).toString('hex')}`;
    const created = await createSession(env.db, { merchantId: merchant.id, playerId: newPlayer(), token });
    const digestHex = createHash('sha256').update(token).digest('hex');
    for (const near of [token.toLowerCase(), token.slice(0, -1), `${token} `, ` ${token}`, digestHex]) {
      await tokenAnswer(await request({ authToken: near }), 8);
    }
    expect(await (await request({ authToken: created.token })).json()).toMatchObject({ errorCode: 0 });
  });

  it('answers 400 naming authToken when it is missing or empty (once the signature holds)', async () => {
    for (const authToken of [undefined, '']) {
      const response = await request({ authToken });
      expect(response.status).toBe(400);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body.errorCode).toBe(1);
      expect(body.errorMessage).toMatch(/^authToken\b/);
    }
  });
});

describe('POST /betSlip body types', () => {
  it.each([42, null, true, ['token'], { token: 'x' }])(
    'answers 400 naming authToken when it is %j',
    async (authToken) => {
      const response = await api.post('/betSlip', signedBody(merchant, { authToken }));
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ errorCode: 1, errorMessage: expect.stringMatching(/^authToken\b/) });
    },
  );
});

describe('token storage', () => {
  it('keeps only the SHA-256 digest of a token, never the token itself', async () => {
    const token = `clear-token-${randomBytes(16).toString('hex')}`;
    const created = await createSession(env.db, { merchantId: merchant.id, playerId: newPlayer(), token });
    const served = await api.post('/betSlip', signedBody(merchant, { authToken: token }));
    expect(await served.json()).toMatchObject({ errorCode: 0 });

    const row = await env.db
      .selectFrom('sessions')
      .select('token_digest')
      .where('id', '=', created.sessionId)
      .executeTakeFirstOrThrow();
    expect(row.token_digest.equals(createHash('sha256').update(token, 'utf8').digest())).toBe(true);

    // No column of any table the session touches holds the token, in clear or in hex.
    const tokenHex = Buffer.from(token, 'utf8').toString('hex');
    for (const table of ['sessions', 'players', 'wallets', 'bet_slip_items'] as const) {
      const rows = await sql<{ row: string }>`SELECT t::text AS row FROM ${sql.table(table)} t`.execute(env.db);
      for (const { row } of rows.rows) {
        expect(row).not.toContain(token);
        expect(row).not.toContain(tokenHex);
      }
    }
  });
});

describe('logs', () => {
  it('never write tokens, hashes or secrets', async () => {
    const secretKey = `log-secret-${randomBytes(16).toString('hex')}`;
    const owner = await createMerchant(env.db, { secretKey });
    const good = await createSession(env.db, {
      merchantId: owner.id,
      playerId: newPlayer(),
      token: `tok-${randomBytes(12).toString('hex')}`,
    });
    const expired = await createSession(env.db, {
      merchantId: owner.id,
      playerId: newPlayer(),
      token: `tok-${randomBytes(12).toString('hex')}`,
      expiresAt: Date.now() - 1,
    });
    const unknownToken = `tok-${randomBytes(12).toString('hex')}`;
    const timestamp = Date.now();
    const hash = signMessage(owner.id, timestamp, secretKey);
    const send = (fields: Record<string, unknown>) =>
      api.post('/betSlip', { merchantId: owner.id, timestamp, hash, ...fields });

    const before = logLines.length;
    expect((await send({ authToken: good.token })).status).toBe(200);
    expect((await send({ authToken: expired.token })).status).toBe(200);
    expect((await send({ authToken: unknownToken })).status).toBe(200);
    const wrongHash = `${hash.slice(0, -1)}${hash.endsWith('0') ? '1' : '0'}`;
    expect((await send({ authToken: good.token, hash: wrongHash })).status).toBe(401);
    const query = new URLSearchParams({
      merchantId: owner.id,
      timestamp: String(timestamp),
      hash,
      authToken: good.token,
    });
    expect((await api.get(`/betSlip?${query}`)).status).toBe(200);

    await api.deps.accessLog.flush();
    const written = logLines.slice(before).join('');
    // The requests were logged (so the check below looks at something) …
    expect(written).toContain('"route":"/betSlip"');
    // … and nothing secret is in them.
    for (const secret of [secretKey, hash, wrongHash, good.token, expired.token, unknownToken]) {
      expect(written).not.toContain(secret);
    }
  });
});
