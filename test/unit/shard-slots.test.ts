import { describe, expect, it } from 'vitest';
import { ShardSlots } from '../../src/worker/jobs/shard-slots.js';

/** A job that runs until the test lets it finish. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { done, open };
}

describe('slots shared by the shards of a worker', () => {
  it('never run more jobs than the capacity, and serve waiting shards in turn', async () => {
    const slots = new ShardSlots(2);
    const started: string[] = [];
    let running = 0;
    let most = 0;
    const gates = new Map<string, ReturnType<typeof gate>>();
    const job = (shard: string, name: string) =>
      slots.run(shard, async () => {
        running++;
        most = Math.max(most, running);
        started.push(name);
        const g = gate();
        gates.set(name, g);
        await g.done;
        running--;
      });
    // Shard a has a backlog of five; b and c each send one job after it.
    const jobs = ['a1', 'a2', 'a3', 'a4', 'a5'].map((name) => job('a', name));
    jobs.push(job('b', 'b1'), job('c', 'c1'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['a1', 'a2']);
    for (let step = 0; step < 5; step++) {
      const name = started[step] as string;
      gates.get(name)?.open();
      await new Promise((resolve) => setImmediate(resolve));
    }
    // b and c do not wait behind a's whole backlog: they get the next slots, one turn each.
    expect(started.slice(0, 5)).toEqual(['a1', 'a2', 'a3', 'b1', 'c1']);
    for (const g of gates.values()) g.open();
    await new Promise((resolve) => setImmediate(resolve));
    for (const g of gates.values()) g.open();
    await Promise.all(jobs.map((promise) => Promise.race([promise, new Promise((r) => setTimeout(r, 100))])));
    expect(most).toBe(2);
  });
});
