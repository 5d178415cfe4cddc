import { describe, expect, it } from 'vitest';
import { createClientAddressResolver } from '../../src/api/http/client-address.js';
import { ConfigError, loadConfig } from '../../src/shared/config/config.js';

/** TRUST_PROXY as the environment gives it, parsed by the config as at start-up. */
function trustProxy(setting: string): string[] {
  return loadConfig({
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/rewards',
    REDIS_URL: 'redis://127.0.0.1:6379',
    TRUST_PROXY: setting,
  }).TRUST_PROXY;
}

const resolverFor = (setting: string) => createClientAddressResolver(trustProxy(setting));

describe('client address with TRUST_PROXY off', () => {
  it.each(['false', '', ' false '])('uses the peer address and ignores X-Forwarded-For (TRUST_PROXY=%j)', (setting) => {
    const resolve = resolverFor(setting);
    expect(resolve('127.0.0.1', '10.1.2.3')).toBe('127.0.0.1');
    expect(resolve('198.51.100.7', undefined)).toBe('198.51.100.7');
  });

  it('reads an IPv4-mapped peer as IPv4', () => {
    expect(resolverFor('false')('::ffff:198.51.100.7', undefined)).toBe('198.51.100.7');
  });

  it('has no address when the peer is unknown', () => {
    expect(resolverFor('false')(undefined, '10.1.2.3')).toBeNull();
  });
});

describe('client address with trusted proxies', () => {
  const resolve = resolverFor('127.0.0.1, 10.0.0.0/8');

  it('believes X-Forwarded-For only from a trusted peer', () => {
    expect(resolve('127.0.0.1', '203.0.113.9')).toBe('203.0.113.9');
    expect(resolve('::ffff:127.0.0.1', '203.0.113.9')).toBe('203.0.113.9');
    expect(resolve('198.51.100.7', '203.0.113.9')).toBe('198.51.100.7');
  });

  it('uses the trusted peer itself when there is no X-Forwarded-For', () => {
    expect(resolve('127.0.0.1', undefined)).toBe('127.0.0.1');
    expect(resolve('127.0.0.1', '')).toBe('127.0.0.1');
  });

  it('walks from the right past trusted proxies to the first untrusted hop', () => {
    expect(resolve('127.0.0.1', '203.0.113.9, 10.0.0.5, 10.0.0.6')).toBe('203.0.113.9');
    expect(resolve('127.0.0.1', '203.0.113.9,10.0.0.5')).toBe('203.0.113.9');
  });

  it('does not let a client choose its address by prepending one', () => {
    // The client sent "X-Forwarded-For: 10.9.9.9"; our proxy appended the address it saw.
    expect(resolve('127.0.0.1', '10.9.9.9, 203.0.113.9')).toBe('203.0.113.9');
    expect(resolve('127.0.0.1', '192.0.2.1, 203.0.113.9')).toBe('203.0.113.9');
  });

  it('takes the leftmost hop when every hop is a trusted proxy', () => {
    expect(resolve('127.0.0.1', '10.0.0.7, 10.0.0.5')).toBe('10.0.0.7');
  });

  it('normalises IPv4-mapped hops', () => {
    expect(resolve('127.0.0.1', '::ffff:203.0.113.9')).toBe('203.0.113.9');
  });

  it('accepts IPv6 proxies and clients', () => {
    const v6 = resolverFor('::1, fd00::/8');
    expect(v6('::1', '2001:db8::7, fd00::1')).toBe('2001:db8::7');
  });
});

describe('TRUST_PROXY validation', () => {
  it.each(['true', 'proxy.internal', '10.0.0.0/40'])('refuses %j, naming the setting', (setting) => {
    expect(() => trustProxy(setting)).toThrow(ConfigError);
    expect(() => trustProxy(setting)).toThrow(/TRUST_PROXY/);
  });

  it.each([
    ['false', []],
    ['', []],
    [' false ', []],
    ['127.0.0.1, 10.0.0.0/8', ['127.0.0.1', '10.0.0.0/8']],
    ['::1,fd00::/8,', ['::1', 'fd00::/8']],
  ])('parses %j into the proxy list %j', (setting, list) => {
    expect(trustProxy(setting)).toEqual(list);
  });
});
