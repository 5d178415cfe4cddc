import { describe, expect, it } from 'vitest';
import { LocalTokenBuckets } from '../../src/api/limits/local-token-buckets.js';

/** The rate limiter's fallback while Redis cannot count: a token bucket per merchant, in memory, bounded. */

function bucketsAt(start = 0, maxMerchants = 100) {
  const clock = { now: start };
  const buckets = new LocalTokenBuckets({ maxMerchants, now: () => clock.now });
  return { buckets, clock };
}

describe('LocalTokenBuckets', () => {
  it('lets a fresh merchant send `limit` at once, then refuses with a Retry-After of at least a second', () => {
    const { buckets } = bucketsAt();
    const answers = Array.from({ length: 7 }, () => buckets.take('m', 5));
    expect(answers.map((answer) => answer.allowed)).toEqual([true, true, true, true, true, false, false]);
    expect(answers.map((answer) => answer.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0]);
    for (const answer of answers) expect(answer.retryAfterSeconds).toBe(1);
  });

  it('refills at `limit` a second, never above `limit`', () => {
    const { buckets, clock } = bucketsAt();
    for (let i = 0; i < 10; i++) buckets.take('m', 10);
    expect(buckets.take('m', 10).allowed).toBe(false);
    clock.now += 300; // three tokens back
    const served = Array.from({ length: 5 }, () => buckets.take('m', 10).allowed).filter(Boolean);
    expect(served).toHaveLength(3);
    clock.now += 60_000; // a minute idle: a full bucket, not 600 tokens
    const burst = Array.from({ length: 15 }, () => buckets.take('m', 10).allowed).filter(Boolean);
    expect(burst).toHaveLength(10);
  });

  it('tells a refused request to come back after the whole second the next token takes at 1/s', () => {
    const { buckets } = bucketsAt();
    expect(buckets.take('m', 1).allowed).toBe(true);
    const refused = buckets.take('m', 1);
    expect(refused).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
  });

  it('keeps merchants apart', () => {
    const { buckets } = bucketsAt();
    expect(buckets.take('a', 1).allowed).toBe(true);
    expect(buckets.take('a', 1).allowed).toBe(false);
    expect(buckets.take('b', 1).allowed).toBe(true);
  });

  it('holds at most maxMerchants buckets, dropping the least recently counted', () => {
    const { buckets } = bucketsAt(0, 3);
    for (const merchant of ['a', 'b', 'c']) buckets.take(merchant, 1);
    buckets.take('a', 1); // a is now the most recent; b the least
    buckets.take('d', 1);
    expect(buckets.size).toBe(3);
    // a and c kept their (empty) buckets; b's was dropped and comes back full.
    expect(buckets.take('a', 1).allowed).toBe(false);
    expect(buckets.take('c', 1).allowed).toBe(false);
    expect(buckets.take('b', 1).allowed).toBe(true);
    for (let i = 0; i < 10_000; i++) buckets.take(`flood-${i}`, 1);
    expect(buckets.size).toBe(3);
  });
});
