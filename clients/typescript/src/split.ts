/**
 * Splits a bulk cancel of any size into requests within the service's limits (docs/interface.md,
 * "Limits"): at most `maxItems` identifiers (BULK_MAX_ITEMS, 10,000) and at most `maxBodyBytes` of
 * body (BODY_LIMIT_BYTES, 2 MiB), less room for the signed fields and the rest of the body.
 */

export interface SplitLimits {
  maxItems: number;
  maxBodyBytes: number;
}

/** Bytes kept for everything but the list entries: signed fields, field names, brackets, dryRun. */
const BODY_OVERHEAD_BYTES = 1_024;

export interface Tagged<T extends string> {
  list: T;
  value: string;
}

/** Consecutive chunks of `entries`, each within both limits; order kept, nothing dropped. */
export function splitWithinLimits<T extends string>(entries: readonly Tagged<T>[], limits: SplitLimits): Tagged<T>[][] {
  const chunks: Tagged<T>[][] = [];
  let current: Tagged<T>[] = [];
  let bytes = BODY_OVERHEAD_BYTES;
  for (const entry of entries) {
    // An entry costs its JSON text and a comma.
    const cost = Buffer.byteLength(JSON.stringify(entry.value), 'utf8') + 1;
    if (current.length > 0 && (current.length >= limits.maxItems || bytes + cost > limits.maxBodyBytes)) {
      chunks.push(current);
      current = [];
      bytes = BODY_OVERHEAD_BYTES;
    }
    current.push(entry);
    bytes += cost;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
