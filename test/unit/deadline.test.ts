import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { noAnswerWithin, withDeadline } from '../../src/shared/process/deadline.js';

describe('withDeadline', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers what the promise answers, and clears its timer', async () => {
    const onTimeout = vi.fn(() => 'late' as const);
    await expect(withDeadline(Promise.resolve(42), 1_000, onTimeout)).resolves.toBe(42);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it('rejects with what the promise rejects with, and clears its timer', async () => {
    const failure = new Error('connection reset');
    await expect(withDeadline(Promise.reject(failure), 1_000, () => 'late')).rejects.toBe(failure);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers what onTimeout returns once the time is up', async () => {
    const never = new Promise<number>(() => {});
    const outcome = withDeadline(never, 1_000, () => 'late' as const);
    await vi.advanceTimersByTimeAsync(999);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(outcome).resolves.toBe('late');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects with what onTimeout throws once the time is up', async () => {
    const never = new Promise<number>(() => {});
    const outcome = withDeadline(never, 500, () => noAnswerWithin(500));
    const settled = expect(outcome).rejects.toThrow('no answer within 500 ms');
    await vi.advanceTimersByTimeAsync(500);
    await settled;
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ignores the promise once the deadline has passed', async () => {
    let resolve: (value: number) => void = () => {};
    const slow = new Promise<number>((r) => {
      resolve = r;
    });
    const outcome = withDeadline(slow, 100, () => -1);
    await vi.advanceTimersByTimeAsync(100);
    resolve(7);
    await expect(outcome).resolves.toBe(-1);
  });
});
