import type { Db } from '../shared/db/client.js';
import type { MerchantStatus } from '../shared/db/schema.js';
import { buildIpMatcher } from '../shared/ip-ranges.js';
import { findMerchantById } from '../shared/repositories/merchants.repository.js';

export interface AuthenticatedMerchant {
  id: string;
  name: string;
  status: MerchantStatus;
  secretKey: string;
  previousSecretKey: string | null;
  previousSecretValidUntil: number | null;
  /** null: any source address is allowed. */
  isAllowedSource: ((address: string) => boolean) | null;
  rateLimitPerSecond: number | null;
}

/**
 * Merchant records as authentication needs them, cached for a few seconds: a signed request would
 * otherwise cost one more database round trip. The cache bounds how long a disabled merchant, a new
 * allow-list or a rotated secret takes to apply (MERCHANT_CACHE_TTL_MS, 0 switches it off).
 * Unknown ids are cached too, so a flood of made-up ids cannot reach the database.
 */
export class MerchantDirectory {
  private readonly cache = new Map<string, { merchant: AuthenticatedMerchant | null; expiresAt: number }>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  async find(merchantId: string): Promise<AuthenticatedMerchant | null> {
    const now = Date.now();
    const cached = this.cache.get(merchantId);
    if (cached && cached.expiresAt > now) return cached.merchant;

    const row = await findMerchantById(this.db, merchantId);
    const merchant: AuthenticatedMerchant | null = row
      ? {
          id: row.id,
          name: row.name,
          status: row.status,
          secretKey: row.secret_key,
          previousSecretKey: row.previous_secret_key,
          previousSecretValidUntil: row.previous_secret_valid_until?.getTime() ?? null,
          isAllowedSource: row.allowed_ips ? buildIpMatcher(row.allowed_ips) : null,
          rateLimitPerSecond: row.rate_limit_per_second,
        }
      : null;
    if (this.ttlMs > 0) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      this.cache.set(merchantId, { merchant, expiresAt: now + this.ttlMs });
    }
    return merchant;
  }

  /** Called by the admin API after it changes a merchant, so this process sees the change at once. */
  forget(merchantId: string): void {
    this.cache.delete(merchantId);
  }
}
