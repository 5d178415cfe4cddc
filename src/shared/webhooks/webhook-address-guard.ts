import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may be sent. A merchant chooses the URL, and the worker that POSTs to it sits inside
 * the service's network: without this guard a webhook could reach the database, Redis, a cloud
 * metadata endpoint or anything else only the service can see (server-side request forgery).
 *
 * Two checks; WEBHOOK_ALLOW_PRIVATE (development and tests) switches off the address and port rules, never
 * the one on user information:
 * - when the URL is set: http or https only, on port 80 or 443 (an internal service listens on any other
 *   port of a public-looking address, such as a load balancer's), no user information (`user:pass@`, a
 *   credential that would be stored, shown and logged in clear), and a host given as an IP address (or
 *   `localhost`) must not be a special-purpose address;
 * - at every delivery: the same rules for the stored URL, and every address the host name resolves to
 *   must be an ordinary unicast one, and the connection goes to the address that was checked (a name
 *   re-pointed at an internal address after it was set, DNS rebinding, is caught here).
 */

/**
 * IPv6 special-purpose ranges of the IANA registry that ipaddr.js 2.5.0 does not name (its `range()`
 * answers 'unicast' for them), and the IPv4-compatible form it does not name either.
 */
const UNNAMED_IPV6_RANGES: ReadonlyArray<[ipaddr.IPv6, number]> = [
  // Dummy IPv6 prefix (RFC 9780): never routed on the Internet.
  [ipaddr.IPv6.parse('100:0:0:1::'), 64],
  // The deprecated IPv4-compatible addresses (RFC 4291 §2.5.5.1), `::a.b.c.d`: some stacks still
  // reach the IPv4 address inside (`::7f00:1` is 127.0.0.1 to them).
  [ipaddr.IPv6.parse('::'), 96],
];
/** Global unicast (RFC 4291, IANA's IPv6 address space): everything outside it is unassigned or special. */
const GLOBAL_UNICAST: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];

/**
 * The special-purpose range an address falls in ('unicast' for an ordinary public address), as
 * ipaddr.js names the IANA registries' ranges: private, loopback, link-local, carrier-grade NAT,
 * reserved and documentation ranges, multicast, broadcast, AS112, AMT, and for IPv6 also unique-local,
 * discard (`100::/64`), the translated forms (`::ffff:0:0/96`, RFC 6145; `64:ff9b::/96` and
 * `64:ff9b:1::/48`, RFC 6052/8215), 6to4, Teredo, ORCHID, benchmarking, segment routing and the rest. An
 * IPv4-mapped address (`::ffff:10.0.0.1`) is judged as the IPv4 address it carries. Anything that is
 * not an IP address at all is 'invalid'.
 */
export function addressRange(address: string): string {
  if (isIP(address) === 0) return 'invalid';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range();
  const ipv6 = parsed as ipaddr.IPv6;
  if (ipv6.isIPv4MappedAddress()) return ipv6.toIPv4Address().range();
  const named = ipv6.range();
  if (named !== 'unicast') return named;
  if (UNNAMED_IPV6_RANGES.some((range) => ipv6.match(range))) return 'reserved';
  return ipv6.match(GLOBAL_UNICAST) ? 'unicast' : 'reserved';
}

/** True for an address a webhook must not reach: any range but ordinary unicast. */
export function isRefusedAddress(address: string): boolean {
  return addressRange(address) !== 'unicast';
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
  // Even where private addresses are allowed: a credential in the URL would be stored and shown in clear.
  if (hasUserInformation(url)) return { ok: false, reason: USER_INFORMATION_REFUSED };
  if (!allowPrivate) {
    const host = bareHost(url);
    if (isLocalhostName(host) || (isIP(host) !== 0 && isRefusedAddress(host))) {
      return { ok: false, reason: 'must not point at a loopback, private, link-local or other internal address' };
    }
    if (!isWebPort(url)) return { ok: false, reason: 'must use port 80 or 443' };
  }
  return { ok: true, url: url.href };
}

const USER_INFORMATION_REFUSED =
  'must not carry user information (user:password@): authenticate the webhook by its signature';

function hasUserInformation(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}

/**
 * The URL as it may be shown (admin answers, the audit log): without user information, which a URL
 * stored before that was refused may still carry.
 */
export function displayableWebhookUrl(stored: string): string {
  try {
    const url = new URL(stored);
    if (!hasUserInformation(url)) return stored;
    url.username = '';
    url.password = '';
    return url.href;
  } catch {
    return stored;
  }
}

/** The delivery-time check for user information: throws RefusedUserInformationError. */
export function assertNoUserInformation(url: URL): void {
  if (hasUserInformation(url)) throw new RefusedUserInformationError();
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

/** A webhook URL with user information stored before it was refused: not sent (node would send it as Basic auth). */
export class RefusedUserInformationError extends Error {
  constructor() {
    super('refused: the URL carries user information (user:password@)');
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
