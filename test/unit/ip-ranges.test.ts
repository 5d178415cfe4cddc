import { describe, expect, it } from 'vitest';
import { buildIpMatcher, isIpOrCidr, normalizeAddress } from '../../src/shared/config/ip-ranges.js';

describe('isIpOrCidr', () => {
  it.each(['127.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '192.168.1.7/32', '::1', '2001:db8::/32', '::/0', 'fe80::1/128'])(
    'accepts %s',
    (entry) => {
      expect(isIpOrCidr(entry)).toBe(true);
    },
  );

  it.each([
    '',
    'localhost',
    '10.0.0.0/33',
    '2001:db8::/129',
    '256.1.1.1',
    '10.0.0.0/',
    '/8',
    '10.0.0.0/8/8',
    '10.0.0.0/-1',
    '1.2.3',
  ])('rejects %j', (entry) => {
    expect(isIpOrCidr(entry)).toBe(false);
  });
});

describe('normalizeAddress', () => {
  it('turns an IPv4-mapped IPv6 address into the IPv4 address', () => {
    expect(normalizeAddress('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(normalizeAddress('::FFFF:10.1.2.3')).toBe('10.1.2.3');
  });

  it('leaves other addresses as they are', () => {
    expect(normalizeAddress('10.1.2.3')).toBe('10.1.2.3');
    expect(normalizeAddress('2001:db8::1')).toBe('2001:db8::1');
    expect(normalizeAddress('::1')).toBe('::1');
  });
});

describe('buildIpMatcher', () => {
  it('matches single IPv4 addresses exactly', () => {
    const allowed = buildIpMatcher(['127.0.0.1', '192.0.2.10']);
    expect(allowed('127.0.0.1')).toBe(true);
    expect(allowed('192.0.2.10')).toBe(true);
    expect(allowed('127.0.0.2')).toBe(false);
    expect(allowed('192.0.2.11')).toBe(false);
  });

  it('matches IPv4 CIDR ranges at their edges', () => {
    const allowed = buildIpMatcher(['10.0.0.0/8', '192.168.4.0/22']);
    expect(allowed('10.0.0.0')).toBe(true);
    expect(allowed('10.255.255.255')).toBe(true);
    expect(allowed('11.0.0.0')).toBe(false);
    expect(allowed('9.255.255.255')).toBe(false);
    expect(allowed('192.168.4.0')).toBe(true);
    expect(allowed('192.168.7.255')).toBe(true);
    expect(allowed('192.168.8.0')).toBe(false);
    expect(allowed('192.168.3.255')).toBe(false);
  });

  it('treats /32 as one address and /0 as every IPv4 address', () => {
    expect(buildIpMatcher(['127.0.0.1/32'])('127.0.0.1')).toBe(true);
    expect(buildIpMatcher(['127.0.0.1/32'])('127.0.0.0')).toBe(false);
    const any = buildIpMatcher(['0.0.0.0/0']);
    expect(any('1.2.3.4')).toBe(true);
    expect(any('255.255.255.255')).toBe(true);
  });

  it('matches IPv6 addresses and ranges, whatever their spelling', () => {
    const allowed = buildIpMatcher(['::1', '2001:db8::/32']);
    expect(allowed('::1')).toBe(true);
    expect(allowed('0:0:0:0:0:0:0:1')).toBe(true);
    expect(allowed('2001:db8:ffff::42')).toBe(true);
    expect(allowed('2001:DB8::1')).toBe(true);
    expect(allowed('2001:db9::1')).toBe(false);
    expect(allowed('::2')).toBe(false);
  });

  it('matches an IPv4 peer seen through an IPv6 socket (::ffff:a.b.c.d) against IPv4 entries', () => {
    const allowed = buildIpMatcher(['10.0.0.0/8', '127.0.0.1']);
    expect(allowed('::ffff:10.20.30.40')).toBe(true);
    expect(allowed('::ffff:127.0.0.1')).toBe(true);
    expect(allowed('::ffff:11.0.0.1')).toBe(false);
  });

  it('does not mix families: IPv4 ranges refuse IPv6 peers, IPv6 ranges refuse IPv4 peers', () => {
    expect(buildIpMatcher(['0.0.0.0/0'])('::1')).toBe(false);
    expect(buildIpMatcher(['0.0.0.0/0'])('2001:db8::1')).toBe(false);
    expect(buildIpMatcher(['2001:db8::/32', '::1'])('127.0.0.1')).toBe(false);
  });

  it('refuses what is not an address', () => {
    const allowed = buildIpMatcher(['0.0.0.0/0', '::/0']);
    expect(allowed('')).toBe(false);
    expect(allowed('localhost')).toBe(false);
    expect(allowed('10.0.0.1, 10.0.0.2')).toBe(false);
  });

  it('refuses everything when the list is empty', () => {
    expect(buildIpMatcher([])('127.0.0.1')).toBe(false);
  });

  it('skips a malformed entry instead of failing, and still applies the others', () => {
    // Entries come from the database; one bad entry must not lock the merchant out or raise.
    const allowed = buildIpMatcher(['not-an-address', '10.0.0.0/99', '127.0.0.1']);
    expect(allowed('127.0.0.1')).toBe(true);
    expect(allowed('10.0.0.1')).toBe(false);
  });
});
