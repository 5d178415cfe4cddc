/**
 * Per-merchant request rate, counted in one-second windows by each API process. With N API
 * replicas behind a balancer a merchant can reach N times the limit; the limit protects each
 * process and the queue behind it, it is not a billing quota.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { second: number; count: number }>();

  /** Counts one request; returns null when it is allowed, else the seconds to wait. */
  take(key: string, limitPerSecond: number, now = Date.now()): number | null {
    const second = Math.floor(now / 1000);
    const window = this.windows.get(key);
    if (!window || window.second !== second) {
      if (this.windows.size > 100_000) this.windows.clear();
      this.windows.set(key, { second, count: 1 });
      return null;
    }
    if (window.count >= limitPerSecond) return 1;
    window.count += 1;
    return null;
  }
}
