import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where a webhook may be sent. A merchant chooses the URL, and the worker that POSTs to it sits inside
 * the service's network: without this guard a webhook could reach the database, Redis, a cloud
 * metadata endpoint or anything else only the service can see (server-side request forgery).
 *
 * Two checks, both switched off by WEBHOOK_ALLOW_PRIVATE (development and tests):
 * - when the URL is set: http or https only, on port 80 or 443 (an internal service listens on any other
 *   port of a public-looking address, such as a load balancer's), and a host given as an IP address (or
 *   `localhost`) must not be an internal address;
 * - at every delivery: every address the host name resolves to must be public, and the connection goes
 *   to the address that was checked (a name re-pointed at an internal address after it was set, DNS
 *   rebinding, is caught here).
 */

const refused = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", the unspecified address
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (shared address space)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  refused.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible addresses
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
  // Ranges that carry an IPv4 address inside an IPv6 one, so a gateway or relay would forward to it
  // (possibly an internal one): refused whole rather than judged by the address they carry.
  ['64:ff9b::', 96], // NAT64, well-known prefix (RFC 6052)
  ['64:ff9b:1::', 48], // NAT64, local-use prefix (RFC 8215)
  ['2002::', 16], // 6to4 (RFC 3056)
  ['2001::', 32], // Teredo (RFC 4380)
] as const) {
  refused.addSubnet(network, prefix, 'ipv6');
}

/**
 * True for an address a webhook must not reach. IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) are
 * judged as the IPv4 address they carry. Anything that is not an IP address is refused too.
 */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return refused.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** Host names that always mean this machine (RFC 6761), whatever a resolver says. */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The host of a URL without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

export type WebhookUrlCheck = { ok: true; url: string } | { ok: false; reason: string };

/**
 * The check made when an admin sets a webhook URL: the URL in its normal form, or why it is refused.
 * A host name is not resolved here (it may not resolve yet, and what it resolves to can change): the
 * delivery-time check covers it.
 */
export function checkWebhookUrl(input: string, allowPrivate: boolean): WebhookUrlCheck {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, reason: 'must be an absolute http or https URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: 'must use http or https' };
  }
  if (url.hash !== '') return { ok: false, reason: 'must not have a fragment' };
  // Credentials in the URL would be stored and shown with it (the admin view, the audit log): refused,
  // whatever the address. The reason does not repeat them.
  if (url.username !== '' || url.password !== '')
    return { ok: false, reason: 'must not carry a user name or password' };
  if (!allowPrivate) {
    const host = bareHost(url);
    if (isLocalhostName(host) || (isIP(host) !== 0 && isRefusedAddress(host))) {
      return { ok: false, reason: 'must not point at a loopback, private, link-local or other internal address' };
    }
    if (!isWebPort(url)) return { ok: false, reason: 'must use port 80 or 443' };
  }
  return { ok: true, url: url.href };
}

/** Port 80 or 443, written or implied by the scheme (the URL parser drops a scheme's default port). */
function isWebPort(url: URL): boolean {
  return url.port === '' || url.port === '80' || url.port === '443';
}

/**
 * A refused delivery target: permanent for this delivery, not a network failure worth retrying. The
 * message, which is stored with the delivery and shown to admins, does not name the address: an internal
 * address a merchant's host name resolves to is a fact about our network. `address` is for our logs.
 */
export class RefusedAddressError extends Error {
  constructor(readonly address: string) {
    super('refused: the host is, or resolves to, an internal address');
  }
}

/** A webhook set before the port rule, or stored by other means: refused at delivery as at set-up. */
export class RefusedPortError extends Error {
  constructor() {
    super('refused: webhooks are delivered to port 80 or 443 only');
  }
}

/**
 * The delivery-time check for the port, and for a host given as an IP address (node connects to those
 * without a lookup) or `localhost`. Throws RefusedPortError or RefusedAddressError.
 */
export function assertDeliverableHost(url: URL): void {
  const host = bareHost(url);
  if (isLocalhostName(host) || (isIP(host) !== 0 && isRefusedAddress(host))) throw new RefusedAddressError(host);
  if (!isWebPort(url)) throw new RefusedPortError();
}

/**
 * A `lookup` for node's http/https requests that resolves the name, refuses it when any of its
 * addresses is internal, and otherwise hands node exactly the addresses it checked, so the socket
 * connects to a checked address (no second resolution that could answer differently). `resolve` is
 * the system resolver; tests give one that answers what a rebinding attacker's DNS would.
 */
export function createGuardedLookup(resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...(options as LookupOptions), all: true }, (error, addresses: LookupAddress[]) => {
      if (error) {
        callback(error, '', 0);
        return;
      }
      const internal = addresses.find((entry) => isRefusedAddress(entry.address));
      if (internal || addresses.length === 0) {
        callback(new RefusedAddressError(internal?.address ?? 'no address'), '', 0);
        return;
      }
      if ((options as LookupOptions).all) {
        (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
        return;
      }
      const [first] = addresses as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
}

export const guardedLookup = createGuardedLookup();
