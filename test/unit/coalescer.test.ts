import { afterEach, describe, expect, it, vi } from 'vitest';
import { Coalescer } from '../../src/worker/cancellations/single-cancels/cancel-coalescer.js';

describe('Coalescer', () => {
  it('applies requests that arrive together in one batch, each getting its own outcome', async () => {
    const batches: number[][] = [];
    const coalescer = new Coalescer<number, number>(
      async (requests) => {
        batches.push(requests);
        return requests.map((n) => n * 10);
      },
      100,
      5,
    );
    const outcomes = await Promise.all([1, 2, 3].map((n) => coalescer.submit(n)));
    expect(outcomes).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('never puts more than the maximum in one batch', async () => {
    const sizes: number[] = [];
    const coalescer = new Coalescer<number, number>(
      async (requests) => {
        sizes.push(requests.length);
        return requests;
      },
      4,
      1_000,
    );
    await Promise.all(Array.from({ length: 10 }, (_, n) => coalescer.submit(n)));
    expect(sizes.every((size) => size <= 4)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(10);
  });

  it('with a maximum of 1, applies every request on its own (coalescing off)', async () => {
    const sizes: number[] = [];
    const coalescer = new Coalescer<number, number>(
      async (requests) => {
        sizes.push(requests.length);
        return requests;
      },
      1,
      5,
    );
    await Promise.all([1, 2, 3].map((n) => coalescer.submit(n)));
    expect(sizes).toEqual([1, 1, 1]);
  });

  it('fails every request of a failed batch, and only the one an Error stands for', async () => {
    const failing = new Coalescer<number, number>(
      async () => {
        throw new Error('database away');
      },
      10,
      1,
    );
    const all = await Promise.allSettled([failing.submit(1), failing.submit(2)]);
    expect(all.map((result) => result.status)).toEqual(['rejected', 'rejected']);

    const partial = new Coalescer<number, number>(
      async (requests) => requests.map((n) => (n === 2 ? new Error('refused') : n)),
      10,
      1,
    );
    const some = await Promise.allSettled([1, 2, 3].map((n) => partial.submit(n)));
    expect(some.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('drain applies what is waiting and waits for batches in flight', async () => {
    let applied = 0;
    const coalescer = new Coalescer<number, number>(
      async (requests) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        applied += requests.length;
        return requests;
      },
      100,
      10_000,
    );
    const pending = [coalescer.submit(1), coalescer.submit(2)];
    await coalescer.drain();
    expect(applied).toBe(2);
    await expect(Promise.all(pending)).resolves.toEqual([1, 2]);
  });

  describe('timing (fake clock)', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    function recording(maxBatch: number, windowMs: number) {
      const batches: number[][] = [];
      const coalescer = new Coalescer<number, number>(
        async (requests) => {
          batches.push([...requests]);
          return requests;
        },
        maxBatch,
        windowMs,
      );
      return { batches, coalescer };
    }

    it('applies a full batch at once, without waiting for the window, and leaves no timer behind', async () => {
      vi.useFakeTimers();
      const { batches, coalescer } = recording(3, 10_000);
      const outcomes = Promise.all([1, 2, 3].map((n) => coalescer.submit(n)));
      expect(batches).toEqual([[1, 2, 3]]);
      expect(vi.getTimerCount()).toBe(0);
      await expect(outcomes).resolves.toEqual([1, 2, 3]);
    });

    it('waits the window after the first request, with one timer however many arrive', async () => {
      vi.useFakeTimers();
      const { batches, coalescer } = recording(10, 50);
      const outcomes = Promise.all([1, 2].map((n) => coalescer.submit(n)));
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(49);
      expect(batches).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(batches).toEqual([[1, 2]]);
      await expect(outcomes).resolves.toEqual([1, 2]);
    });

    it('starts a new window for requests that arrive after a batch has gone', async () => {
      vi.useFakeTimers();
      const { batches, coalescer } = recording(10, 50);
      const first = coalescer.submit(1);
      vi.advanceTimersByTime(50);
      await expect(first).resolves.toBe(1);
      const second = coalescer.submit(2);
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(50);
      await expect(second).resolves.toBe(2);
      expect(batches).toEqual([[1], [2]]);
    });

    it('drain applies what waits at once, without waiting for the window', async () => {
      vi.useFakeTimers();
      const { batches, coalescer } = recording(10, 10_000);
      const pending = coalescer.submit(7);
      await coalescer.drain();
      expect(batches).toEqual([[7]]);
      expect(vi.getTimerCount()).toBe(0);
      await expect(pending).resolves.toBe(7);
    });

    it('drain with nothing waiting or in flight returns at once and applies nothing', async () => {
      const { batches, coalescer } = recording(10, 10_000);
      await coalescer.drain();
      expect(batches).toEqual([]);
    });
  });

  it('a failed batch rejects with the error the batch failed with', async () => {
    const failure = new Error('database away');
    const coalescer = new Coalescer<number, number>(
      async () => {
        throw failure;
      },
      2,
      1,
    );
    await expect(Promise.all([coalescer.submit(1), coalescer.submit(2)])).rejects.toBe(failure);
  });

  it('rejects a request with the very Error its outcome is', async () => {
    const refused = new Error('refused');
    const coalescer = new Coalescer<number, number>(async (requests) => requests.map(() => refused), 1, 1);
    await expect(coalescer.submit(1)).rejects.toBe(refused);
  });
});
