import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type CachedReadAll,
  ReadAllCache,
  readAllCacheKey,
} from '../../src/api/reward-configurations/read-all-cache.js';

const M1 = '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f';
const M2 = '7a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d';

/** A cached answer of this JSON text. */
const answerOf = (json: string): CachedReadAll => ({ body: new TextEncoder().encode(json), total: undefined });
/** The JSON text of a cached answer. */
const textOf = (answer: CachedReadAll) => Buffer.from(answer.body).toString();

/** A loader that answers `body` and counts its calls. */
function loader(body: string) {
  const calls = { count: 0 };
  const load = async (): Promise<CachedReadAll> => {
    calls.count++;
    return answerOf(body);
  };
  return { calls, load };
}

const key = (name?: string, page?: { limit: number; offset: number }) =>
  readAllCacheKey({ name, status: undefined, rewardType: undefined, page });

describe('readAllCacheKey', () => {
  it('folds ASCII letters of name, as the query lower-cases both sides', () => {
    expect(key('GOLD Weekend')).toBe(key('gold weekend'));
  });

  it('keeps apart what the query may not treat the same', () => {
    expect(key(' gold')).not.toBe(key('gold')); // no trimming
    expect(key('ÉTÉ')).not.toBe(key('été')); // non-ASCII case is left to Postgres
    expect(key('ﬁ')).not.toBe(key('fi')); // no Unicode normalisation
    expect(key(undefined, { limit: 1_000, offset: 0 })).not.toBe(key()); // paged answers carry X-Total-Count
  });

  it('treats an empty name as no name filter (it matches every configuration)', () => {
    expect(key('')).toBe(key());
  });
});

describe('ReadAllCache', () => {
  it('evicts the least recently used answer past maxEntries', async () => {
    const cache = new ReadAllCache({ ttlMs: 60_000, maxEntries: 2, maxBytes: 1_000_000 });
    const a = loader('[1]');
    const b = loader('[2]');
    const c = loader('[3]');
    await cache.get(M1, 'a', a.load);
    await cache.get(M1, 'b', b.load);
    await cache.get(M1, 'a', a.load); // a used again: b is the oldest
    await cache.get(M1, 'c', c.load);
    await cache.get(M1, 'a', a.load);
    await cache.get(M1, 'c', c.load);
    expect([a.calls.count, c.calls.count]).toEqual([1, 1]);
    await cache.get(M1, 'b', b.load);
    expect(b.calls.count).toBe(2);
  });

  it('evicts by bytes, and serves but does not keep an answer larger than maxBytes', async () => {
    const cache = new ReadAllCache({ ttlMs: 60_000, maxEntries: 100, maxBytes: 400 });
    const first = loader('x'.repeat(100));
    const second = loader('y'.repeat(150));
    const huge = loader('z'.repeat(400));
    await cache.get(M1, 'first', first.load);
    await cache.get(M1, 'second', second.load);
    expect((await cache.get(M1, 'huge', huge.load)).body.byteLength).toBe(400);
    await cache.get(M1, 'huge', huge.load);
    expect(huge.calls.count).toBe(2);
    // 100 + 150 (+ about 40 a key) fit in 400; a third 100-byte answer pushes out the oldest.
    const third = loader('w'.repeat(100));
    await cache.get(M1, 'third', third.load);
    await cache.get(M1, 'second', second.load);
    await cache.get(M1, 'first', first.load);
    expect([second.calls.count, first.calls.count]).toEqual([1, 2]);
  });

  it('shares one load between concurrent misses, and forgets a failed one', async () => {
    const cache = new ReadAllCache({ ttlMs: 60_000, maxEntries: 10, maxBytes: 10_000 });
    const shared = loader('[]');
    await Promise.all([cache.get(M1, 'k', shared.load), cache.get(M1, 'k', shared.load)]);
    expect(shared.calls.count).toBe(1);

    let failures = 0;
    const failing = async (): Promise<CachedReadAll> => {
      failures++;
      throw new Error('database down');
    };
    await expect(cache.get(M1, 'f', failing)).rejects.toThrow('database down');
    await expect(cache.get(M1, 'f', failing)).rejects.toThrow('database down');
    expect(failures).toBe(2);
  });

  it("forgets one merchant's answers, whatever the case of its id, and keeps a load begun before the write out", async () => {
    const cache = new ReadAllCache({ ttlMs: 60_000, maxEntries: 10, maxBytes: 10_000 });
    const mine = loader('[1]');
    const theirs = loader('[2]');
    await cache.get(M1, 'k', mine.load);
    await cache.get(M2, 'k', theirs.load);
    cache.forgetMerchant(M1.toUpperCase());
    await cache.get(M1, 'k', mine.load);
    await cache.get(M2, 'k', theirs.load);
    expect([mine.calls.count, theirs.calls.count]).toEqual([2, 1]);

    // A read that was running when the configuration was written may hold the old answer: not kept.
    let finish: (value: CachedReadAll) => void = () => {};
    const stale = cache.get(M2, 'slow', () => new Promise<CachedReadAll>((resolve) => (finish = resolve)));
    cache.forgetMerchant(M2);
    finish(answerOf('[old]'));
    expect(textOf(await stale)).toBe('[old]');
    const fresh = loader('[new]');
    expect(textOf(await cache.get(M2, 'slow', fresh.load))).toBe('[new]');
  });

  describe('refresh ahead', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('serves an answer past half its TTL at once and reloads it in the background, once', async () => {
      vi.useFakeTimers({ now: 1_000_000, toFake: ['Date'] });
      const cache = new ReadAllCache({ ttlMs: 2_000, maxEntries: 10, maxBytes: 10_000, now: () => Date.now() });
      let body = '[v1]';
      let release: () => void = () => {};
      const calls = { count: 0 };
      const load = async (): Promise<CachedReadAll> => {
        calls.count++;
        const answer = answerOf(body);
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return answer;
      };
      const first = cache.get(M1, 'k', load);
      release();
      expect(textOf(await first)).toBe('[v1]');

      vi.setSystemTime(1_000_999); // younger than half the TTL: a plain hit
      expect(textOf(await cache.get(M1, 'k', load))).toBe('[v1]');
      expect(calls.count).toBe(1);

      body = '[v2]';
      vi.setSystemTime(1_001_000); // half the TTL: served as it is, one reload starts
      expect(textOf(await cache.get(M1, 'k', load))).toBe('[v1]');
      expect(textOf(await cache.get(M1, 'k', load))).toBe('[v1]');
      expect(calls.count).toBe(2);
      release();
      await vi.waitFor(async () => expect(textOf(await cache.get(M1, 'k', load))).toBe('[v2]'));
    });

    it('never serves an answer longer than the TTL after it was read, even when the reload failed', async () => {
      vi.useFakeTimers({ now: 5_000_000, toFake: ['Date'] });
      const cache = new ReadAllCache({ ttlMs: 2_000, maxEntries: 10, maxBytes: 10_000, now: () => Date.now() });
      await cache.get(M1, 'k', loader('[v1]').load);
      vi.setSystemTime(5_001_500);
      let failures = 0;
      const failing = async (): Promise<CachedReadAll> => {
        failures++;
        throw new Error('database away');
      };
      expect(textOf(await cache.get(M1, 'k', failing))).toBe('[v1]');
      await vi.waitFor(() => expect(failures).toBe(1));
      vi.setSystemTime(5_002_000);
      await expect(cache.get(M1, 'k', failing)).rejects.toThrow('database away');
    });
  });
});
