import { z } from 'zod';
import { adminTokenProblem, parseAdminTokens } from '../admin-operators.js';
import { DEFAULT_BULK_MAX_ITEMS } from './setting-defaults.js';
import { booleanFromEnv, nonNegativeInt, positiveInt, trustedProxies } from './setting-types.js';

/**
 * The listeners and what they accept: ports, admin tokens, portal links and sessions, signatures,
 * bodies, proxies, caches, rate limits, HTTP timeouts.
 */
export const httpSettings = {
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  HOST: z.string().min(1).default('0.0.0.0'),
  /**
   * The admin listener: the admin API, the queue dashboard and /metrics answer here only, never on PORT
   * (docs/design.md, "Admin plane"). Keep it off the merchants' network.
   */
  ADMIN_PORT: z.coerce.number().int().min(0).max(65535).default(3002),
  /**
   * Admin operators, `name:token,...` (each token at least 32 characters, no placeholder). Parsed into
   * a list; see adminOperators() for the one list the admin plane uses.
   */
  ADMIN_TOKENS: z
    .string()
    .default('')
    .transform((setting, context) => {
      const { operators, problems } = parseAdminTokens(setting);
      for (const problem of problems) context.addIssue({ code: 'custom', message: problem });
      return problems.length > 0 ? z.NEVER : operators;
    }),
  /** One operator named `admin` (as ADMIN_TOKENS=admin:<token>); the admin plane is closed while no token is set. */
  ADMIN_TOKEN: z
    .string()
    .optional()
    .transform((token, context) => {
      if (token === undefined || token === '') return undefined;
      const problem = adminTokenProblem(token);
      if (problem) {
        context.addIssue({ code: 'custom', message: problem });
        return z.NEVER;
      }
      return token;
    }),
  /**
   * The merchants' listener as merchants reach it (scheme, host, port; no path): the origin of the
   * merchant portal's links (docs/portal.md). Unset: `http://localhost:$PORT`. Portal cookies are
   * `Secure` unless it is plain http.
   */
  PUBLIC_BASE_URL: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .url({ protocol: /^https?$/ })
      .refine((url) => ['', '/'].includes(new URL(url).pathname) && !new URL(url).search, 'an origin only, no path')
      .transform((url) => new URL(url).origin)
      .optional(),
  ),
  /**
   * How long a merchant portal link stays valid after an operator issues it (it opens one session).
   * A link is a bearer credential handed over a chat or an e-mail: short, one minute to a day.
   */
  PORTAL_LINK_LIFETIME_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .max(24 * 60 * 60 * 1000)
    .default(15 * 60 * 1000),
  /**
   * How long a merchant portal session lasts from the link's use (never extended by use): the longest a
   * stolen portal cookie works unless an operator revokes the session. One minute to 7 days (ended
   * sessions are listed for 7 days).
   */
  PORTAL_SESSION_LIFETIME_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .max(7 * 24 * 60 * 60 * 1000)
    .default(8 * 60 * 60 * 1000),
  /** Lets the queue dashboard retry, promote, clean and remove jobs; read-only otherwise. */
  DASHBOARD_WRITE: booleanFromEnv.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  /** Accepted clock difference between the merchant's `timestamp` and ours. */
  SIGNATURE_WINDOW_MS: positiveInt(300_000),
  /** Largest request body accepted, in bytes. */
  BODY_LIMIT_BYTES: positiveInt(2 * 1024 * 1024),
  /** Most identifiers one bulkCancel / bulkCancelByQuery request may carry. */
  BULK_MAX_ITEMS: positiveInt(DEFAULT_BULK_MAX_ITEMS),
  /**
   * Which proxies' X-Forwarded-For is believed when finding a caller's address for IP allow-lists:
   * `false` (default, the peer address is the source), or a comma-separated list of proxy IPs/CIDRs.
   * Parsed into that list: empty when no proxy is trusted.
   */
  TRUST_PROXY: trustedProxies,
  /**
   * How long a merchant record is cached by each API process (and a merchant's webhook settings by each
   * worker); bounds how long a change takes to apply.
   */
  MERCHANT_CACHE_TTL_MS: nonNegativeInt(5_000),
  /** Most merchant records one API process caches (ids that name no merchant are held apart, fewer). */
  MERCHANT_CACHE_MAX_ENTRIES: positiveInt(10_000),
  /** Most bytes of merchant records one API process caches (allow-lists make some records large). */
  MERCHANT_CACHE_MAX_BYTES: positiveInt(16 * 1024 * 1024),
  /**
   * During a Postgres outage a merchant's last known record is still used (its cancels need only
   * Redis), for at most this long after it was read: a disabled merchant or a rotated secret stops
   * working within it, whatever the outage.
   */
  MERCHANT_STALE_MAX_MS: positiveInt(5 * 60_000),
  /** How long an API process reuses a readAll answer for the same merchant and filters; 0 switches it off. */
  READ_CACHE_TTL_MS: nonNegativeInt(2_000),
  /** Most readAll answers one API process keeps. */
  READ_CACHE_MAX_ENTRIES: positiveInt(10_000),
  /** Most bytes of readAll answers one API process keeps; a larger answer is served but not kept. */
  READ_CACHE_MAX_BYTES: positiveInt(32 * 1024 * 1024),
  /**
   * Tenant defaults: limits every merchant gets unless an operator sets its own, so that one merchant's
   * flood, slow upload or oversized body cannot take the API from the others (docs/design.md §10).
   *
   * Requests per second per merchant on merchant routes, counted in Redis across every API replica;
   * a merchant's own `rateLimitPerSecond` replaces it. 0 switches the default off (benchmarks).
   */
  RATE_LIMIT_PER_SECOND: nonNegativeInt(1_000),
  /**
   * How long a request waits for Redis to count it. Past this (or on an error) the API process
   * counts the merchant in a token bucket of its own, with the same limit: never no limit.
   */
  RATE_LIMIT_TIMEOUT_MS: positiveInt(100),
  /** Most merchants one API process keeps a fallback token bucket for (least recently used leave first). */
  RATE_LIMIT_FALLBACK_MAX_MERCHANTS: positiveInt(10_000),
  /**
   * Largest request body of every route but bulkCancel and bulkCancelByQuery (which take up to
   * BODY_LIMIT_BYTES), read before the signature is checked. Never more than BODY_LIMIT_BYTES.
   */
  SMALL_BODY_LIMIT_BYTES: positiveInt(16 * 1024),
  /**
   * Most bytes of request bodies one API process reads before authentication at once, across every
   * request (each reserves its declared size; bulk bodies together at most half). Past it, a new
   * body is refused with 503 and Retry-After before it is read. 64 MiB.
   */
  UNAUTHENTICATED_BODY_BYTES_MAX: positiveInt(64 * 1024 * 1024),
  /** Most time a client may take to send a whole request (headers and body); past it, 408 and the connection closed. */
  HTTP_REQUEST_TIMEOUT_MS: positiveInt(30_000),
  /** Most time a client may take to send a request's headers; past it, 408 and the connection closed. */
  HTTP_HEADERS_TIMEOUT_MS: positiveInt(30_000),
};
