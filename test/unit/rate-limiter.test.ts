import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/api/rate-limiter.js';

const second = 1_763_679_600_000;

describe('RateLimiter', () => {
  it('allows the limit within one second and refuses the next with a 1 s wait', () => {
    const limiter = new RateLimiter();
    expect(limiter.take('m1', 2, second)).toBeNull();
    expect(limiter.take('m1', 2, second + 500)).toBeNull();
    expect(limiter.take('m1', 2, second + 999)).toBe(1);
    expect(limiter.take('m1', 2, second + 999)).toBe(1);
  });

  it('starts counting again in the next second', () => {
    const limiter = new RateLimiter();
    expect(limiter.take('m1', 1, second)).toBeNull();
    expect(limiter.take('m1', 1, second + 1)).toBe(1);
    expect(limiter.take('m1', 1, second + 1_000)).toBeNull();
    expect(limiter.take('m1', 1, second + 1_001)).toBe(1);
  });

  it('counts each key on its own', () => {
    const limiter = new RateLimiter();
    expect(limiter.take('m1', 1, second)).toBeNull();
    expect(limiter.take('m2', 1, second)).toBeNull();
    expect(limiter.take('m1', 1, second)).toBe(1);
    expect(limiter.take('m2', 1, second)).toBe(1);
  });

  it('does not count refused requests towards the next second', () => {
    const limiter = new RateLimiter();
    limiter.take('m1', 1, second);
    for (let i = 0; i < 10; i++) expect(limiter.take('m1', 1, second + i)).toBe(1);
    expect(limiter.take('m1', 1, second + 1_000)).toBeNull();
  });

  it('allows exactly the limit, for larger limits too', () => {
    const limiter = new RateLimiter();
    const answers = Array.from({ length: 12 }, () => limiter.take('m1', 10, second));
    expect(answers.filter((answer) => answer === null)).toHaveLength(10);
    expect(answers.slice(10)).toEqual([1, 1]);
  });
});
