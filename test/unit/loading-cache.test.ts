import { describe, expect, it, vi } from 'vitest';
import { LoadingCache } from '../../src/shared/cache/loading-cache.js';

describe('LoadingCache', () => {
  /** A clock the test moves (lru-cache and the cache read it). */
  function clockAt(start: number) {
    const clock = { ms: start, now: () => clock.ms };
    return clock;
  }

  function counted<V>(answer: () => Promise<V>) {
    const calls = { count: 0 };
    const load = () => {
      calls.count++;
      return answer();
    };
    return { calls, load };
  }

  /** A load that answers only when released. */
  function gated<V>(value: V) {
    let release: () => void = () => {};
    const calls = { count: 0 };
    const load = async (): Promise<V> => {
      calls.count++;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return value;
    };
    return { calls, load, release: () => release() };
  }

  const options = { ttlMs: 1_000, maxEntries: 10, maxBytes: 1_000, sizeOf: (value: string) => value.length };

  it('loads a miss once, then answers from memory', async () => {
    const cache = new LoadingCache<string>(options);
    const a = counted(async () => 'A');
    expect(await cache.get('a', a.load)).toBe('A');
    expect(await cache.get('a', a.load)).toBe('A');
    expect(a.calls.count).toBe(1);
  });

  it('shares one load between concurrent misses, and forgets a failed one', async () => {
    const cache = new LoadingCache<string>(options);
    const slow = gated('A');
    const both = Promise.all([cache.get('a', slow.load), cache.get('a', slow.load)]);
    await vi.waitFor(() => expect(slow.calls.count).toBe(1));
    slow.release();
    expect(await both).toEqual(['A', 'A']);
    expect(slow.calls.count).toBe(1);

    const failing = counted<string>(async () => {
      throw new Error('source down');
    });
    await expect(cache.get('f', failing.load)).rejects.toThrow('source down');
    await expect(cache.get('f', failing.load)).rejects.toThrow('source down');
    expect(failing.calls.count).toBe(2);
  });

  it('keeps nothing with ttlMs 0: every call loads', async () => {
    const cache = new LoadingCache<string>({ ...options, ttlMs: 0 });
    const a = counted(async () => 'A');
    expect([await cache.get('a', a.load), await cache.get('a', a.load)]).toEqual(['A', 'A']);
    expect(a.calls.count).toBe(2);
  });

  it('evicts the least recently used value past maxEntries; a hit counts as a use', async () => {
    const cache = new LoadingCache<string>({ ...options, maxEntries: 2 });
    const a = counted(async () => 'A');
    const b = counted(async () => 'B');
    await cache.get('a', a.load);
    await cache.get('b', b.load);
    await cache.get('a', a.load); // a is now the most recently used: b is the oldest
    await cache.get('c', async () => 'C');
    await cache.get('a', a.load);
    await cache.get('b', b.load);
    expect([a.calls.count, b.calls.count]).toEqual([1, 2]);
  });

  it('keeps a null answer like any other value without `absent`', async () => {
    const cache = new LoadingCache<string | null>({ ...options, sizeOf: (value) => value?.length ?? 1 });
    const none = counted(async () => null);
    expect(await cache.get('a', none.load)).toBeNull();
    expect(await cache.get('a', none.load)).toBeNull();
    expect(none.calls.count).toBe(1);
  });

  it('keeps null answers apart with `absent`: made-up keys never evict real values', async () => {
    const cache = new LoadingCache<string | null>({
      ...options,
      maxEntries: 2,
      sizeOf: (value) => value?.length ?? 0,
      absent: { maxEntries: 1, answer: null },
    });
    const real = counted(async () => 'R');
    await cache.get('real', real.load);
    const ghosts = counted(async () => null);
    for (const key of ['g1', 'g2', 'g3']) expect(await cache.get(key, ghosts.load)).toBeNull();
    expect(await cache.get('g3', ghosts.load)).toBeNull(); // the last made-up key is remembered
    expect(ghosts.calls.count).toBe(3);
    expect(await cache.get('g1', ghosts.load)).toBeNull(); // an older one was evicted by g2, g3
    expect(ghosts.calls.count).toBe(4);
    expect(await cache.get('real', real.load)).toBe('R');
    expect(real.calls.count).toBe(1);
  });

  it('refreshes ahead: past refreshAfterMs a hit is served and one reload starts; never served past ttlMs', async () => {
    const clock = clockAt(1_000_000);
    const cache = new LoadingCache<string>({ ...options, ttlMs: 2_000, refreshAfterMs: 1_000, now: clock.now });
    await cache.get('k', async () => 'v1');
    clock.ms = 1_000_999;
    const reload = gated('v2');
    expect(await cache.get('k', reload.load)).toBe('v1');
    expect(reload.calls.count).toBe(0);
    clock.ms = 1_001_000;
    expect(await cache.get('k', reload.load)).toBe('v1');
    expect(await cache.get('k', reload.load)).toBe('v1');
    expect(reload.calls.count).toBe(1);
    reload.release();
    await vi.waitFor(async () => expect(await cache.get('k', reload.load)).toBe('v2'));

    // The reload began at 1_001_000: its value expires at 1_003_000 whatever happens to later reloads.
    clock.ms = 1_002_500;
    const failing = counted<string>(async () => {
      throw new Error('source down');
    });
    expect(await cache.get('k', failing.load)).toBe('v2');
    await vi.waitFor(() => expect(failing.calls.count).toBe(1));
    clock.ms = 1_003_000;
    await expect(cache.get('k', failing.load)).rejects.toThrow('source down');
  });

  it('does not refresh ahead without refreshAfterMs', async () => {
    const clock = clockAt(1_000_000);
    const cache = new LoadingCache<string>({ ...options, now: clock.now });
    const a = counted(async () => 'A');
    await cache.get('a', a.load);
    clock.ms = 1_000_999;
    await cache.get('a', a.load);
    expect(a.calls.count).toBe(1);
  });

  it('serves the last known value, even expired, when a load fails with an error serveStaleOn picks', async () => {
    const clock = clockAt(1_000_000);
    const cache = new LoadingCache<string>({
      ...options,
      now: clock.now,
      serveStaleOn: (error) => error instanceof Error && error.message === 'unavailable',
    });
    await cache.get('a', async () => 'A');
    clock.ms = 1_005_000;
    expect(
      await cache.get('a', async () => {
        throw new Error('unavailable');
      }),
    ).toBe('A');
    await expect(
      cache.get('a', async () => {
        throw new Error('syntax error');
      }),
    ).rejects.toThrow('syntax error');
    await expect(
      cache.get('never-seen', async () => {
        throw new Error('unavailable');
      }),
    ).rejects.toThrow('unavailable');
    // The stale value is answered, not stored again: the next good load replaces it.
    expect(await cache.get('a', async () => 'A2')).toBe('A2');
  });

  it('does not answer a last known value read longer ago than staleMaxAgeMs', async () => {
    const clock = clockAt(1_000_000);
    const unavailable = async (): Promise<string> => {
      throw new Error('unavailable');
    };
    const cache = new LoadingCache<string>({
      ...options,
      serveStaleOn: (error) => error instanceof Error && error.message === 'unavailable',
      staleMaxAgeMs: 60_000,
      now: clock.now,
    });
    await cache.get('a', async () => 'A');
    clock.ms = 1_060_000;
    expect(await cache.get('a', unavailable)).toBe('A');
    clock.ms = 1_060_001;
    await expect(cache.get('a', unavailable)).rejects.toThrow('unavailable');
  });

  it('forgets one key, or the keys a predicate picks, and keeps out their loads begun before', async () => {
    const cache = new LoadingCache<string>(options);
    for (const key of ['m1:a', 'm1:b', 'm2:a']) await cache.get(key, async () => 'old');
    cache.forgetWhere((key) => key.startsWith('m1:'));
    expect(await cache.get('m1:a', async () => 'new')).toBe('new');
    expect(await cache.get('m2:a', async () => 'new')).toBe('old');
    cache.forget('m2:a');
    expect(await cache.get('m2:a', async () => 'new')).toBe('new');

    // A load running across a forget of its key answers its caller, but is not kept and no longer shared.
    const running = gated('before');
    const first = cache.get('m1:slow', running.load);
    await vi.waitFor(() => expect(running.calls.count).toBe(1));
    cache.forgetWhere((key) => key.startsWith('m1:'));
    running.release();
    expect(await first).toBe('before');
    expect(await cache.get('m1:slow', async () => 'after')).toBe('after');

    const shared = gated('before');
    const pending = cache.get('x', shared.load);
    await vi.waitFor(() => expect(shared.calls.count).toBe(1));
    cache.forget('x');
    const fresh = cache.get('x', async () => 'after');
    shared.release();
    expect([await pending, await fresh]).toEqual(['before', 'after']);
  });

  it('counts values with sizeOf against maxBytes, and does not keep one larger than it', async () => {
    const cache = new LoadingCache<string>({ ...options, maxBytes: 5 });
    const huge = counted(async () => 'abcdef');
    expect(await cache.get('huge', huge.load)).toBe('abcdef');
    await cache.get('huge', huge.load);
    expect(huge.calls.count).toBe(2);
  });
});
