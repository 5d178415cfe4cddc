import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../src/shared/bounded-cache.js';

const NOW = 1_763_679_600_000;

function cache(options: Partial<{ maxEntries: number; maxBytes: number; ttlMs: number }> = {}) {
  return new BoundedCache<string>({
    maxEntries: 3,
    maxBytes: 1_000,
    ttlMs: 1_000,
    sizeOf: (value) => value.length,
    ...options,
  });
}

describe('BoundedCache', () => {
  it('evicts the least recently used entry past maxEntries; a hit counts as a use', () => {
    const lru = cache();
    lru.set('a', 'A', NOW);
    lru.set('b', 'B', NOW);
    lru.set('c', 'C', NOW);
    expect(lru.get('a', NOW)).toBe('A'); // a is now the most recently used: b is the oldest
    lru.set('d', 'D', NOW);
    expect(lru.get('b', NOW)).toBeUndefined();
    expect([lru.get('a', NOW), lru.get('c', NOW), lru.get('d', NOW)]).toEqual(['A', 'C', 'D']);
    expect(lru.size).toBe(3);
  });

  it('evicts least recently used entries until the bytes fit', () => {
    const lru = cache({ maxEntries: 100, maxBytes: 10 });
    lru.set('a', 'xxxx', NOW);
    lru.set('b', 'yyyy', NOW);
    expect(lru.bytes).toBe(8);
    lru.get('a', NOW);
    lru.set('c', 'zzzzzz', NOW); // 14 bytes: b (the oldest) goes, 10 remain
    expect(lru.get('b', NOW)).toBeUndefined();
    expect([lru.get('a', NOW), lru.get('c', NOW)]).toEqual(['xxxx', 'zzzzzz']);
    expect(lru.bytes).toBe(10);
    lru.set('d', 'w', NOW); // 11: a goes
    expect(lru.get('a', NOW)).toBeUndefined();
    expect(lru.bytes).toBe(7);
  });

  it('does not keep a value larger than maxBytes, and keeps what it held', () => {
    const lru = cache({ maxBytes: 5 });
    lru.set('small', 'abc', NOW);
    lru.set('huge', 'abcdef', NOW);
    expect(lru.get('huge', NOW)).toBeUndefined();
    expect(lru.get('small', NOW)).toBe('abc');
    expect(lru.bytes).toBe(3);
  });

  it('expires entries after ttlMs', () => {
    const lru = cache({ ttlMs: 100 });
    lru.set('a', 'A', NOW);
    expect(lru.get('a', NOW + 99)).toBe('A');
    expect(lru.get('a', NOW + 100)).toBeUndefined();
    expect(lru.size).toBe(0);
    expect(lru.bytes).toBe(0);
  });

  it('replaces a value without counting the old one twice', () => {
    const lru = cache();
    lru.set('a', 'xxxx', NOW);
    lru.set('a', 'yy', NOW + 500);
    expect(lru.bytes).toBe(2);
    expect(lru.size).toBe(1);
    // The replacement starts its own time to live.
    expect(lru.get('a', NOW + 1_200)).toBe('yy');
  });

  it('deletes one key, or every key a predicate picks', () => {
    const lru = cache({ maxEntries: 10 });
    for (const key of ['m1:a', 'm1:b', 'm2:a']) lru.set(key, key, NOW);
    lru.delete('m2:a');
    lru.delete('unknown');
    expect(lru.size).toBe(2);
    lru.deleteWhere((key) => key.startsWith('m1:'));
    expect(lru.size).toBe(0);
    expect(lru.bytes).toBe(0);
  });

  it('holds nothing when ttlMs is 0', () => {
    const lru = cache({ ttlMs: 0 });
    lru.set('a', 'A', NOW);
    expect(lru.get('a', NOW)).toBeUndefined();
    expect(lru.size).toBe(0);
  });
});
