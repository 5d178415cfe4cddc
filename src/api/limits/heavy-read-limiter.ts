import { AppError, RETRY_SOON_SECONDS } from '../../shared/errors/errors.js';

/**
 * Bounds the reads that may hold a Postgres connection for long (dry runs, job-rewards pages) per
 * merchant, in this API process: over `perMerchant` running at once, the next answers 429 (errorCode 7,
 * Retry-After) at once, without waiting for a connection. One merchant's burst of dry runs over a
 * million rewards can then hold at most `perMerchant` connections of the pool, and every other request
 * (`/betSlip`, readAll, cancels) still finds one. Counted in memory: with N API replicas behind a balancer
 * a merchant may run up to N × `perMerchant`, and the statement timeout bounds each.
 */
export class HeavyReadLimiter {
  private readonly running = new Map<string, number>();

  constructor(private readonly perMerchant: number) {}

  async run<T>(merchantId: string, read: () => Promise<T>): Promise<T> {
    const current = this.running.get(merchantId) ?? 0;
    if (current >= this.perMerchant) {
      throw new AppError('RATE_LIMITED', `Too many dry runs or job-rewards pages at once (${this.perMerchant})`, {
        retryAfterSeconds: RETRY_SOON_SECONDS,
        logDetail: 'heavy read cap',
      });
    }
    this.running.set(merchantId, current + 1);
    try {
      return await read();
    } finally {
      const left = (this.running.get(merchantId) ?? 1) - 1;
      // No entry for a merchant with nothing running: the map stays as small as the reads in flight.
      if (left <= 0) this.running.delete(merchantId);
      else this.running.set(merchantId, left);
    }
  }
}
