/** Nearest-rank percentile (p in 0..100) of unsorted samples; null when there are none. */
export function percentile(samples: readonly number[], p: number): number | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? null;
}

export function median(samples: readonly number[]): number | null {
  return percentile(samples, 50);
}

/** The median (the mean of the middle two of an even count), rounded; null for none. */
export function medianOf(values: readonly number[], digits: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return round(median, digits);
}

export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** a / b rounded, or null when either is missing or b is zero. */
export function ratio(a: number | null | undefined, b: number | null | undefined, digits = 3): number | null {
  if (a == null || b == null || b === 0) return null;
  return round(a / b, digits);
}
