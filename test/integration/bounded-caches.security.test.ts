import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { MerchantDirectory } from '../../src/api/auth/merchant-directory.js';
import { ReadAllCache } from '../../src/api/reward-configurations/read-all-cache.js';
import { startTestApi } from '../helpers/api.js';
import { createConfiguration, createMerchant, testKeyRing } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * The API's in-process caches are keyed by what callers send, so they must stay bounded whatever is
 * sent, and keyed by normalised values. A record changed behind the cache's back (straight in the
 * database) tells whether a lookup was answered from the cache.
 */

const { env } = useTestContext();

const HOUR_MS = 3_600_000;

async function disableBehindTheCache(merchantId: string): Promise<void> {
  await env.db.updateTable('merchants').set({ status: 'DISABLED' }).where('id', '=', merchantId).execute();
}

describe('merchant directory', () => {
  it('keys records by the lower-cased id: any case hits the same entry, and forget() clears it', async () => {
    const directory = new MerchantDirectory(env.db, testKeyRing(), {
      ttlMs: HOUR_MS,
      maxEntries: 100,
      maxBytes: 1_000_000,
    });
    const merchant = await createMerchant(env.db);
    expect((await directory.find(merchant.id.toUpperCase()))?.status).toBe('ACTIVE');
    await disableBehindTheCache(merchant.id);
    // Cached under one key whatever case it was asked in.
    expect((await directory.find(merchant.id))?.status).toBe('ACTIVE');
    expect((await directory.find(merchant.id.toUpperCase()))?.status).toBe('ACTIVE');
    directory.forget(merchant.id.toUpperCase());
    expect((await directory.find(merchant.id))?.status).toBe('DISABLED');
  });

  it('reloads a record past half its TTL in the background, serving the held one meanwhile', async () => {
    vi.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
    try {
      const directory = new MerchantDirectory(env.db, testKeyRing(), {
        ttlMs: 10_000,
        maxEntries: 100,
        maxBytes: 1_000_000,
      });
      const merchant = await createMerchant(env.db);
      await directory.find(merchant.id);
      await disableBehindTheCache(merchant.id);
      vi.setSystemTime(Date.now() + 4_900); // younger than half the TTL: a plain hit, nothing reloaded
      expect((await directory.find(merchant.id))?.status).toBe('ACTIVE');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await directory.find(merchant.id))?.status).toBe('ACTIVE');
      vi.setSystemTime(Date.now() + 200); // past half the TTL, well within it: served, and reloaded
      expect((await directory.find(merchant.id))?.status).toBe('ACTIVE');
      await vi.waitFor(async () => expect((await directory.find(merchant.id))?.status).toBe('DISABLED'), {
        timeout: 5_000,
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('evicts the least recently used merchant past maxEntries', async () => {
    const directory = new MerchantDirectory(env.db, testKeyRing(), {
      ttlMs: HOUR_MS,
      maxEntries: 2,
      maxBytes: 1_000_000,
    });
    const first = await createMerchant(env.db);
    const second = await createMerchant(env.db);
    const third = await createMerchant(env.db);
    await directory.find(first.id);
    await directory.find(second.id);
    await directory.find(first.id); // second is now the least recently used
    await directory.find(third.id);
    await Promise.all([first, second, third].map((merchant) => disableBehindTheCache(merchant.id)));
    expect((await directory.find(first.id))?.status).toBe('ACTIVE');
    expect((await directory.find(third.id))?.status).toBe('ACTIVE');
    expect((await directory.find(second.id))?.status).toBe('DISABLED');
  });

  it('counts bytes: a record larger than maxBytes is not kept, and does not push out the others', async () => {
    // ~1,000 ranges cost far more than 20 kB; a merchant without a list costs under 1 kB.
    const ranges = Array.from({ length: 1_000 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`);
    const directory = new MerchantDirectory(env.db, testKeyRing(), {
      ttlMs: HOUR_MS,
      maxEntries: 100,
      maxBytes: 20_000,
    });
    const small = await createMerchant(env.db);
    const large = await createMerchant(env.db, { allowedIps: ranges });
    await directory.find(small.id);
    expect((await directory.find(large.id))?.isAllowedSource?.('10.0.1.7')).toBe(true);
    await Promise.all([small, large].map((merchant) => disableBehindTheCache(merchant.id)));
    expect((await directory.find(large.id))?.status).toBe('DISABLED');
    expect((await directory.find(small.id))?.status).toBe('ACTIVE');
  });

  it('evicts by bytes: a large record pushes out the least recently used ones', async () => {
    const ranges = Array.from({ length: 100 }, (_, i) => `10.0.${i}.0/24`);
    // One record with 100 ranges (~10 kB) fits in 15 kB beside a small one, not beside another large one.
    const directory = new MerchantDirectory(env.db, testKeyRing(), {
      ttlMs: HOUR_MS,
      maxEntries: 100,
      maxBytes: 15_000,
    });
    const small = await createMerchant(env.db);
    const first = await createMerchant(env.db, { allowedIps: ranges });
    const second = await createMerchant(env.db, { allowedIps: ranges });
    await directory.find(first.id);
    await directory.find(small.id);
    await directory.find(second.id); // first (least recently used) leaves
    await Promise.all([small, first, second].map((merchant) => disableBehindTheCache(merchant.id)));
    expect((await directory.find(second.id))?.status).toBe('ACTIVE');
    expect((await directory.find(small.id))?.status).toBe('ACTIVE');
    expect((await directory.find(first.id))?.status).toBe('DISABLED');
  });

  it('keeps real merchants while thousands of made-up ids are looked up', async () => {
    const directory = new MerchantDirectory(env.db, testKeyRing(), {
      ttlMs: HOUR_MS,
      maxEntries: 20,
      maxBytes: 1_000_000,
    });
    const merchant = await createMerchant(env.db);
    await directory.find(merchant.id);
    for (let batch = 0; batch < 20; batch++) {
      const answers = await Promise.all(Array.from({ length: 100 }, () => directory.find(randomUUID())));
      expect(answers.every((answer) => answer === null)).toBe(true);
    }
    await disableBehindTheCache(merchant.id);
    expect((await directory.find(merchant.id))?.status).toBe('ACTIVE');
  });

  it('remembers an unknown id only until the merchant is created through the admin API (forget)', async () => {
    const directory = new MerchantDirectory(env.db, testKeyRing(), {
      ttlMs: HOUR_MS,
      maxEntries: 20,
      maxBytes: 1_000_000,
    });
    const id = randomUUID();
    expect(await directory.find(id)).toBeNull();
    await env.db
      .insertInto('merchants')
      .values({ id, name: 'Late', secret_key: 'k'.repeat(32), allowed_ips: null })
      .execute();
    expect(await directory.find(id)).toBeNull(); // the miss is cached
    directory.forget(id.toUpperCase());
    expect((await directory.find(id))?.name).toBe('Late');
  });
});

describe('readAll cache through the API', () => {
  const READ_ALL = '/api/v1/integration/reward-configurations/readAll';

  it('shares one entry between names that differ only in ASCII case, and keeps READ_CACHE_MAX_ENTRIES', async () => {
    const api = await startTestApi(env, {
      readAllCache: new ReadAllCache({ ttlMs: HOUR_MS, maxEntries: 2, maxBytes: 1_000_000 }),
    });
    try {
      const merchant = await createMerchant(env.db);
      const names = async (name: string) => {
        const response = await api.post(READ_ALL, signedBody(merchant, { name }));
        expect(response.status).toBe(200);
        return ((await response.json()) as Array<{ name: string }>).map((configuration) => configuration.name);
      };
      await createConfiguration(env.db, { merchantId: merchant.id, name: 'Gold Rush', startDate: 1_000 });
      expect(await names('GOLD')).toEqual(['Gold Rush']);

      // Written behind the cache: a name differing only in case is answered from the same entry.
      await createConfiguration(env.db, { merchantId: merchant.id, name: 'Gold Bar', startDate: 2_000 });
      expect(await names('gold')).toEqual(['Gold Rush']);
      expect(await names('Gold')).toEqual(['Gold Rush']);

      // Two other filter sets fill the two entries; the gold one, least recently used, is evicted.
      expect(await names('bar')).toEqual(['Gold Bar']);
      expect(await names('rush')).toEqual(['Gold Rush']);
      expect(await names('gOLD')).toEqual(['Gold Bar', 'Gold Rush']);
    } finally {
      await api.close();
    }
  });
});
