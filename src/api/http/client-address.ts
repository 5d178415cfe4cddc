import { buildIpMatcher, normalizeAddress } from '../../shared/config/ip-ranges.js';

export type ClientAddressResolver = (
  peerAddress: string | undefined,
  forwardedFor: string | undefined,
) => string | null;

/**
 * The caller's address for IP allow-lists. By default it is the connection's peer: a header can be
 * forged by anyone. With TRUST_PROXY (parsed by the config) naming our load balancers, X-Forwarded-For is walked from the
 * right past the trusted proxies, and the first address that is not one of them is the caller.
 */
export function createClientAddressResolver(trustedProxies: readonly string[]): ClientAddressResolver {
  if (trustedProxies.length === 0) {
    return (peer) => (peer ? normalizeAddress(peer) : null);
  }
  const isTrustedProxy = buildIpMatcher(trustedProxies);

  return (peer, forwardedFor) => {
    if (!peer) return null;
    let address = normalizeAddress(peer);
    if (!isTrustedProxy(address) || !forwardedFor) return address;
    const hops = forwardedFor
      .split(',')
      .map((hop) => hop.trim())
      .filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) {
      address = normalizeAddress(hops[i] as string);
      if (!isTrustedProxy(address)) return address;
    }
    return address;
  };
}
