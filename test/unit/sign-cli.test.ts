import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseSignatureHeader, verifyBodyBound, verifySignature } from '../../src/api/auth/signature.js';
import { DEMO_MERCHANT } from '../../src/tools/seed/demo-data.js';
import {
  buildSignedFields,
  parseSignArgs,
  renderSignedRequest,
  type SignCommand,
  toQueryString,
} from '../../src/tools/signed-request.js';

const run = promisify(execFile);
const cliPath = fileURLToPath(new URL('../../src/tools/sign.cli.ts', import.meta.url));
const NOW = 1_763_679_600_000;

function signRequestOf(command: SignCommand) {
  if (command.kind !== 'sign') throw new Error(`expected a sign command, got ${JSON.stringify(command)}`);
  return command.request;
}

describe('parseSignArgs', () => {
  it('signs as the demo merchant at the given time when no flags are given', () => {
    expect(parseSignArgs([], NOW)).toEqual({
      kind: 'sign',
      request: {
        merchantId: DEMO_MERCHANT.id,
        secretKey: DEMO_MERCHANT.secretKey,
        timestamp: NOW,
        extra: {},
        query: false,
        bodyBound: null,
      },
    });
  });

  it('takes merchant, secret, timestamp, extra fields and --query from flags', () => {
    const request = signRequestOf(
      parseSignArgs(
        ['--merchant-id', 'm-1', '--secret', 's3cret', '--timestamp', '42', '--body', '{"authToken":"t"}', '--query'],
        NOW,
      ),
    );
    expect(request).toEqual({
      merchantId: 'm-1',
      secretKey: 's3cret',
      timestamp: 42,
      extra: { authToken: 't' },
      query: true,
      bodyBound: null,
    });
  });

  it.each([
    [['--nope'], /Unknown option '--nope'/],
    [['stray'], /positional/i],
    [['--body', '{not json'], /--body is not valid JSON/],
    [['--body', '[1, 2]'], /--body must be a JSON object/],
    [['--body', 'null'], /--body must be a JSON object/],
    [['--body', '{"hash":"00"}'], /must not contain 'hash'/],
    [['--body', '{"timestamp":1}'], /must not contain 'timestamp'/],
    [['--timestamp', '12.5'], /--timestamp must be epoch milliseconds/],
    [['--timestamp=-1'], /--timestamp must be epoch milliseconds/],
    [['--secret', ''], /--secret must not be empty/],
    [['--v2'], /--v2 needs --path/],
    [['--v2', '--path', 'betSlip'], /--path must start with '\/'/],
    [['--v2', '--path', '/betSlip?a=1', '--query'], /must not hold a query string with --query/],
    [['--v2', '--path', '/p', '--method', 'P OST'], /--method must be an HTTP method/],
    [['--path', '/p'], /belong to --v2/],
    [['--curl-header'], /belong to --v2/],
  ])('rejects %j', (argv, message) => {
    const command = parseSignArgs(argv, NOW);
    expect(command.kind).toBe('invalid');
    expect(command.kind === 'invalid' && command.message).toMatch(message);
  });

  it('answers --help', () => {
    expect(parseSignArgs(['--help'], NOW)).toEqual({ kind: 'help' });
  });
});

describe('signed output', () => {
  it('puts the signed fields first and signs merchantId followed by timestamp', () => {
    const fields = buildSignedFields('m-1', 'key', 1_700_000_000_000, { externalId: 'r-1', ids: ['a'] });
    expect(Object.keys(fields)).toEqual(['merchantId', 'timestamp', 'hash', 'externalId', 'ids']);
    expect(fields).toMatchObject({ merchantId: 'm-1', timestamp: 1_700_000_000_000, externalId: 'r-1', ids: ['a'] });
    expect(fields.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(verifySignature('m-1', 1_700_000_000_000, fields.hash, 'key')).toBe(true);
    expect(verifySignature('m-1', 1_700_000_000_001, fields.hash, 'key')).toBe(false);
    expect(verifySignature('m-1', 1_700_000_000_000, fields.hash, 'other-key')).toBe(false);
  });

  it('renders one JSON line, or a query string whose fields verify', () => {
    const request = signRequestOf(parseSignArgs(['--body', '{"authToken":"demo-session-token"}'], NOW));
    const line = renderSignedRequest(request);
    expect(line).not.toContain('\n');
    const body = JSON.parse(line);
    expect(body).toEqual({
      merchantId: DEMO_MERCHANT.id,
      timestamp: NOW,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      authToken: 'demo-session-token',
    });
    expect(verifySignature(DEMO_MERCHANT.id, NOW, body.hash, DEMO_MERCHANT.secretKey)).toBe(true);

    const query = new URLSearchParams(renderSignedRequest({ ...request, query: true }));
    expect([...query.keys()]).toEqual(['merchantId', 'timestamp', 'hash', 'authToken']);
    expect(query.get('timestamp')).toBe(String(NOW));
    expect(query.get('hash')).toBe(body.hash);
    expect(query.get('authToken')).toBe('demo-session-token');
  });

  it('refuses to flatten a nested field into a query string', () => {
    expect(() => toQueryString({ ids: ['a', 'b'] })).toThrow(/field 'ids'/);
  });
});

describe('--v2', () => {
  const path = '/api/v1/integration/rewards/cancel';

  it('defaults the method to POST, or GET with --query', () => {
    expect(signRequestOf(parseSignArgs(['--v2', '--path', path], NOW)).bodyBound).toEqual({
      method: 'POST',
      path,
      headerOnly: false,
    });
    expect(signRequestOf(parseSignArgs(['--v2', '--path', '/betSlip', '--query'], NOW)).bodyBound).toEqual({
      method: 'GET',
      path: '/betSlip',
      headerOnly: false,
    });
    expect(signRequestOf(parseSignArgs(['--v2', '--path', path, '--method', 'put'], NOW)).bodyBound?.method).toBe(
      'PUT',
    );
  });

  it('prints the body, then an X-Signature line over exactly that body', () => {
    const request = signRequestOf(parseSignArgs(['--v2', '--path', path, '--body', '{"externalId":"r-1"}'], NOW));
    const [body, header, ...rest] = renderSignedRequest(request).split('\n') as [string, string];
    expect(rest).toEqual([]);
    expect(JSON.parse(body)).toMatchObject({ merchantId: DEMO_MERCHANT.id, timestamp: NOW, externalId: 'r-1' });
    expect(header).toMatch(new RegExp(`^X-Signature: t=${NOW},v1=[0-9a-f]{64}$`));
    const parsed = parseSignatureHeader(header.slice('X-Signature: '.length));
    expect(
      parsed && verifyBodyBound(parsed, { method: 'POST', pathWithQuery: path, body }, DEMO_MERCHANT.secretKey),
    ).toBe(true);
    // --curl-header: the same header line alone.
    expect(renderSignedRequest({ ...request, bodyBound: { method: 'POST', path, headerOnly: true } })).toBe(header);
  });

  it('with --query, signs GET, the path with the printed query string, and an empty body', () => {
    const argv = ['--v2', '--path', '/betSlip', '--query', '--body', '{"authToken":"tok en"}'];
    const [query, header] = renderSignedRequest(signRequestOf(parseSignArgs(argv, NOW))).split('\n') as [
      string,
      string,
    ];
    const parsed = parseSignatureHeader(header.slice('X-Signature: '.length));
    const request = { method: 'GET', pathWithQuery: `/betSlip?${query}`, body: '' };
    expect(parsed && verifyBodyBound(parsed, request, DEMO_MERCHANT.secretKey)).toBe(true);
  });
});

describe('sign.cli.ts as a process', () => {
  it('prints a body signed at the current time that verifies with the demo secret', async () => {
    const before = Date.now();
    const { stdout } = await run(process.execPath, [
      '--import',
      'tsx',
      cliPath,
      '--body',
      '{"externalId":"demo-reward-1"}',
    ]);
    const after = Date.now();
    expect(stdout.endsWith('\n')).toBe(true);
    expect(stdout.trim().split('\n')).toHaveLength(1);
    const body = JSON.parse(stdout);
    expect(body.merchantId).toBe(DEMO_MERCHANT.id);
    expect(body.externalId).toBe('demo-reward-1');
    expect(body.timestamp).toBeGreaterThanOrEqual(before);
    expect(body.timestamp).toBeLessThanOrEqual(after);
    expect(verifySignature(body.merchantId, body.timestamp, body.hash, DEMO_MERCHANT.secretKey)).toBe(true);
  });

  it('exits with code 2 and a message on a bad flag', async () => {
    const failure = await run(process.execPath, ['--import', 'tsx', cliPath, '--merchant']).then(
      () => null,
      (error: { code: number; stderr: string; stdout: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toMatch(/^sign: .*--merchant/);
    expect(failure?.stdout).toBe('');
  });
});
