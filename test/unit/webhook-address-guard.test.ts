import type { LookupAddress } from 'node:dns';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import {
  addressRange,
  assertDeliverableHost,
  assertNoUserInformation,
  checkWebhookUrl,
  createGuardedLookup,
  displayableWebhookUrl,
  isRefusedAddress,
  RefusedAddressError,
  RefusedPortError,
  RefusedUserInformationError,
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

  it.each([
    // IANA IPv4 special-purpose registry, one address in each entry.
    ['0.1.2.3', 'unspecified'],
    ['192.0.0.9', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['192.31.196.1', 'as112'],
    ['192.52.193.1', 'amt'],
    ['192.88.99.1', 'reserved'],
    ['192.175.48.1', 'as112'],
    ['198.18.0.1', 'reserved'],
    ['198.51.100.1', 'reserved'],
    ['203.0.113.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    // IANA IPv6 special-purpose registry.
    ['::ffff:0:7f00:1', 'rfc6145'],
    ['::ffff:0:808:808', 'rfc6145'],
    ['100::1', 'discard'],
    ['100:0:0:1::1', 'reserved'],
    ['64:ff9b:1::7f00:1', 'rfc6052'],
    ['2001::1', 'teredo'],
    ['2001:1::1', 'reserved'],
    ['2001:2::1', 'benchmarking'],
    ['2001:3::1', 'amt'],
    ['2001:4:112::1', 'as112v6'],
    ['2001:10::1', 'deprecatedOrchid'],
    ['2001:20::1', 'orchid2'],
    ['2001:30::1', 'droneRemoteIdProtocolEntityTags'],
    ['2001:db8::1', 'reserved'],
    ['2620:4f:8000::1', 'as112v6'],
    ['3fff::1', 'reserved'],
    ['5f00::1', 'segmentRouting'],
    ['fec0::1', 'deprecatedSiteLocal'],
    // Not in the registry but never a public host: IPv4-compatible (`::127.0.0.1`) and unassigned space.
    ['::7f00:1', 'reserved'],
    ['::a00:1', 'reserved'],
    ['4000::1', 'reserved'],
    // IPv4-mapped: judged as the IPv4 address inside, in either spelling.
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::FFFF:C0A8:0101', 'private'],
  ])('refuses %s (%s)', (address, range) => {
    expect(addressRange(address)).toBe(range);
    expect(isRefusedAddress(address)).toBe(true);
  });

  it('refuses the first and the last address of every special-purpose range ipaddr.js names', () => {
    type Ranges = Record<string, [ipaddr.IPv4 | ipaddr.IPv6, number] | Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>>;
    const named = [
      (ipaddr.IPv4.prototype as unknown as { SpecialRanges: Ranges }).SpecialRanges,
      (ipaddr.IPv6.prototype as unknown as { SpecialRanges: Ranges }).SpecialRanges,
    ];
    let checked = 0;
    for (const ranges of named) {
      for (const [name, subnets] of Object.entries(ranges)) {
        const list = (Array.isArray(subnets[0]) ? subnets : [subnets]) as Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
        for (const [network, prefix] of list) {
          const cidr = `${network.toString()}/${prefix}`;
          const first = ipaddr.IPv4.isValid(network.toString())
            ? ipaddr.IPv4.networkAddressFromCIDR(cidr).toString()
            : ipaddr.IPv6.networkAddressFromCIDR(cidr).toNormalizedString();
          const last = ipaddr.IPv4.isValid(network.toString())
            ? ipaddr.IPv4.broadcastAddressFromCIDR(cidr).toString()
            : ipaddr.IPv6.broadcastAddressFromCIDR(cidr).toNormalizedString();
          // The IPv4-mapped range is judged by the address it carries (::ffff:8.8.8.8 is 8.8.8.8).
          if (name === 'ipv4Mapped') continue;
          expect.soft(isRefusedAddress(first), `${name} ${first}`).toBe(true);
          expect.soft(isRefusedAddress(last), `${name} ${last}`).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '192.169.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '2a00:1450::1',
  ])('allows %s', (address) => {
    expect(isRefusedAddress(address)).toBe(false);
  });
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
    'http://[::ffff:0:7f00:1]/',
    'http://[::ffff:0:127.0.0.1]/',
    'http://[100::1]/',
    'http://[64:ff9b:1::a00:1]/',
    'http://[::127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
  ])('refuses the internal address %s unless private addresses are allowed', (url) => {
    expect(checkWebhookUrl(url, false)).toMatchObject({ ok: false, reason: expect.stringContaining('internal') });
    expect(checkWebhookUrl(url, true).ok).toBe(true);
  });

  it.each(['http://u:p@merchant.example/', 'https://user@merchant.example/', 'https://:secret@merchant.example/'])(
    'refuses %s: user information, even when private addresses are allowed',
    (url) => {
      expect(checkWebhookUrl(url, false)).toEqual({ ok: false, reason: expect.stringContaining('user information') });
      expect(checkWebhookUrl(url, true)).toEqual({ ok: false, reason: expect.stringContaining('user information') });
    },
  );

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

describe('user information in a stored URL', () => {
  it('is refused at delivery and never shown', () => {
    expect(() => assertNoUserInformation(new URL('https://u:p@merchant.example/'))).toThrow(
      RefusedUserInformationError,
    );
    expect(() => assertNoUserInformation(new URL('https://merchant.example/'))).not.toThrow();
    expect(displayableWebhookUrl('https://u:p@merchant.example/hooks?x=1')).toBe('https://merchant.example/hooks?x=1');
    expect(displayableWebhookUrl('https://merchant.example/hooks')).toBe('https://merchant.example/hooks');
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
