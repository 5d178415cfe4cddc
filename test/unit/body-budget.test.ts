import { describe, expect, it } from 'vitest';
import { BodyBudget } from '../../src/api/http/body-budget.js';

describe('BodyBudget', () => {
  it('admits bodies while their declared sizes fit, and gives the room back once per reservation', () => {
    const reported: number[] = [];
    const budget = new BodyBudget(100, 10, { set: (value) => reported.push(value) });
    const small = Array.from({ length: 10 }, () => budget.reserve(10));
    expect(small.every((reservation) => reservation !== null)).toBe(true);
    expect(budget.reserve(1)).toBeNull();
    small[0]?.release();
    small[0]?.release();
    expect(budget.reserved).toBe(90);
    expect(budget.reserve(10)).not.toBeNull();
    expect(reported.at(-1)).toBe(100);
  });

  it('lets large bodies hold at most half of the bound, leaving the rest to small ones', () => {
    const budget = new BodyBudget(100, 10, undefined);
    const large = budget.reserve(40);
    expect(large).not.toBeNull();
    expect(budget.reserve(11)).toBeNull();
    expect(budget.reserve(10)).not.toBeNull();
    large?.release();
    expect(budget.reserve(50)).not.toBeNull();
    expect(budget.reserved).toBe(60);
  });
});
