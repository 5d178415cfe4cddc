/**
 * The Cache-Control of an asset whose URL changes with its content (a hash or a package version in it):
 * a year, the longest a cache is expected to keep anything (RFC 9111), and never revalidated, because a
 * new content comes under a new URL.
 */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
