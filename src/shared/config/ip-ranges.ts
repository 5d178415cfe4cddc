import { BlockList, isIP } from 'node:net';

/**
 * IP allow-lists: addresses or CIDR ranges, IPv4 and IPv6, matched with node's BlockList.
 * An IPv4 peer seen through an IPv6 socket (`::ffff:10.0.0.1`) is matched as the IPv4 address.
 */

const CIDR = /^(.+)\/(\d{1,3})$/;

/** True when `entry` is an IPv4/IPv6 address or a CIDR range with a prefix that fits its family. */
export function isIpOrCidr(entry: string): boolean {
  const match = CIDR.exec(entry);
  if (!match) return isIP(entry) !== 0;
  const family = isIP(match[1] ?? '');
  const prefix = Number(match[2]);
  return (family === 4 && prefix <= 32) || (family === 6 && prefix <= 128);
}

export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

/**
 * A malformed entry (one that slipped into the database around the admin API's validation) is
 * skipped: it allows nothing, while the others still apply. Throwing here would turn every request
 * of the merchant into a 503.
 */
export function buildIpMatcher(entries: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    if (!isIpOrCidr(entry)) continue;
    const match = CIDR.exec(entry);
    if (match) {
      const base = match[1] ?? '';
      list.addSubnet(base, Number(match[2]), isIP(base) === 6 ? 'ipv6' : 'ipv4');
    } else {
      list.addAddress(entry, isIP(entry) === 6 ? 'ipv6' : 'ipv4');
    }
  }
  return (address: string) => {
    const normalized = normalizeAddress(address);
    const family = isIP(normalized);
    if (family === 0) return false;
    return list.check(normalized, family === 6 ? 'ipv6' : 'ipv4');
  };
}
