import type { LookupAddress } from 'node:dns';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  assertDeliverableHost,
  checkWebhookUrl,
  createGuardedLookup,
  isRefusedAddress,
  RefusedAddressError,
  RefusedPortError,
} from '../../src/shared/webhooks/webhook-address-guard.js';
import { redactAddresses } from '../../src/worker/webhooks/webhook-sender.js';

describe('isRefusedAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.251',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:a00:1',
    '64:ff9b::a00:1',
    '64:ff9b::808:808',
    '64:ff9b:1::1',
    '2002:a00:1::1',
    '2001:0:4136:e378::1',
    'not-an-address',
  ])('refuses %s', (address) => {
    expect(isRefusedAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '192.169.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    'allows %s',
    (address) => {
      expect(isRefusedAddress(address)).toBe(false);
    },
  );
});

describe('checkWebhookUrl', () => {
  it('accepts public http and https URLs, in normal form, without resolving names', () => {
    expect(checkWebhookUrl('https://Merchant.Example/hooks?x=1', false)).toEqual({
      ok: true,
      url: 'https://merchant.example/hooks?x=1',
    });
    expect(checkWebhookUrl('http://93.184.216.34:443/', false)).toEqual({
      ok: true,
      url: 'http://93.184.216.34:443/',
    });
    expect(checkWebhookUrl('https://merchant.example:80/hooks', false)).toEqual({
      ok: true,
      url: 'https://merchant.example:80/hooks',
    });
  });

  it.each(['http://93.184.216.34:8080/', 'https://merchant.example:8443/', 'http://merchant.example:6379/'])(
    'refuses %s: only ports 80 and 443 unless private addresses are allowed',
    (url) => {
      expect(checkWebhookUrl(url, false)).toEqual({ ok: false, reason: 'must use port 80 or 443' });
      expect(checkWebhookUrl(url, true).ok).toBe(true);
    },
  );

  it.each([
    'http://127.0.0.1/',
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f.0.0.1/',
    'http://10.1.2.3/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://0.0.0.0/',
    'http://localhost:3000/',
    'http://LOCALHOST./',
    'http://api.localhost/',
    'http://[fd00::1]/',
  ])('refuses the internal address %s unless private addresses are allowed', (url) => {
    expect(checkWebhookUrl(url, false)).toMatchObject({ ok: false, reason: expect.stringContaining('internal') });
    expect(checkWebhookUrl(url, true).ok).toBe(true);
  });

  it.each(['ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'example.com/hooks', 'gopher://x/'])(
    'refuses %s: not an http(s) URL, even when private addresses are allowed',
    (url) => {
      expect(checkWebhookUrl(url, true).ok).toBe(false);
    },
  );
});

type Resolver = Parameters<typeof createGuardedLookup>[0];

/** A resolver answering fixed addresses, as an attacker's DNS server would. */
function resolverAnswering(addresses: LookupAddress[]): Resolver {
  return ((_hostname: string, _options: unknown, callback: (e: null, a: LookupAddress[]) => void) =>
    callback(null, addresses)) as unknown as Resolver;
}

describe('createGuardedLookup (delivery-time check, DNS rebinding)', () => {
  it('refuses a name when any of its addresses is internal', async () => {
    const lookup = createGuardedLookup(
      resolverAnswering([
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ]),
    );
    const error = await new Promise((resolve) => lookup('rebound.example', {}, (e) => resolve(e)));
    expect(error).toBeInstanceOf(RefusedAddressError);
    // The address is for our logs; the message, stored with the delivery, does not name it.
    expect((error as RefusedAddressError).address).toBe('10.0.0.7');
    expect((error as Error).message).not.toContain('10.0.0.7');
  });

  it('hands node exactly the public addresses it checked', async () => {
    const lookup = createGuardedLookup(resolverAnswering([{ address: '93.184.216.34', family: 4 }]));
    const single = await new Promise((resolve) =>
      lookup('public.example', {}, (e, address, family) => resolve({ e, address, family })),
    );
    expect(single).toEqual({ e: null, address: '93.184.216.34', family: 4 });
    const all = await new Promise((resolve) =>
      lookup('public.example', { all: true }, (e, addresses) => resolve({ e, addresses })),
    );
    expect(all).toEqual({ e: null, addresses: [{ address: '93.184.216.34', family: 4 }] });
  });

  it("stops node's http client before it connects to a name that resolves to loopback", async () => {
    let connections = 0;
    const server = createServer((_request, response) => response.end('reached'));
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const { port } = server.address() as AddressInfo;
    try {
      const lookup = createGuardedLookup(resolverAnswering([{ address: '127.0.0.1', family: 4 }]));
      const error = await new Promise((resolve) => {
        const sent = request(`http://rebound.example:${port}/`, { method: 'POST', lookup, agent: false });
        sent.on('error', resolve);
        sent.on('response', () => resolve(undefined));
        sent.end('{}');
      });
      expect(error).toBeInstanceOf(RefusedAddressError);
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('assertDeliverableHost (delivery-time check of a stored URL)', () => {
  it('refuses a port other than 80 or 443, and an internal address given as the host', () => {
    expect(() => assertDeliverableHost(new URL('http://93.184.216.34:8080/'))).toThrow(RefusedPortError);
    expect(() => assertDeliverableHost(new URL('http://[64:ff9b::a00:1]/'))).toThrow(RefusedAddressError);
    expect(() => assertDeliverableHost(new URL('https://93.184.216.34/'))).not.toThrow();
  });
});

describe('redactAddresses (errors stored with a delivery)', () => {
  it.each([
    ['connect ECONNREFUSED 10.0.0.5:443', 'connect ECONNREFUSED <address>'],
    ['connect ETIMEDOUT 93.184.216.34:80', 'connect ETIMEDOUT <address>'],
    ['connect EHOSTUNREACH fd12:3456::1', 'connect EHOSTUNREACH <address>'],
    ['read ECONNRESET', 'read ECONNRESET'],
  ])('%s -> %s', (text, redacted) => {
    expect(redactAddresses(text)).toBe(redacted);
  });
});
