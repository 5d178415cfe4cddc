import type { Config } from '../../shared/config/config.js';
import type { BodyLimit } from '../library-bypasses/request-body.js';

/** Under here the bearer token is a header: the admin gate runs first, then the body is read (admin-routes.ts). */
const ADMIN_API_PREFIX = '/admin/v1/';

/**
 * How many bytes of a request's body are read, and when. A merchant's signature is inside the body, so
 * the body is read before anyone knows who sent it: anyone who can reach the port could make the API
 * buffer and parse that much per request. So every route reads at most SMALL_BODY_LIMIT_BYTES (16 KiB,
 * far above any signed read or single cancel), and only bulkCancel and bulkCancelByQuery take up to
 * BODY_LIMIT_BYTES (2 MiB: 10,000 identifiers). The admin API takes large bodies too (10,000 rewards in a
 * request), but only after its bearer token, a header, has been checked: `null` says "not here, after
 * the admin gate". `largeBodyPaths` are the bulk routes' paths (the wiring passes them: plumbing knows no
 * route).
 */
export function bodyLimitBeforeAuthentication(config: Config, largeBodyPaths: readonly string[]): BodyLimit {
  const small = Math.min(config.SMALL_BODY_LIMIT_BYTES, config.BODY_LIMIT_BYTES);
  const large: ReadonlySet<string> = new Set(largeBodyPaths);
  return (c) => {
    const path = c.req.path;
    if (large.has(path)) return config.BODY_LIMIT_BYTES;
    if (path.startsWith(ADMIN_API_PREFIX)) return null;
    return small;
  };
}

/** The admin API's, once its gate has let the request through. */
export const adminBodyLimit: BodyLimit = (c) => c.get('deps').config.BODY_LIMIT_BYTES;
