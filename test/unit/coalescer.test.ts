import { describe, expect, it } from 'vitest';
import { Coalescer } from '../../src/worker/cancel-coalescer.js';

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
});
