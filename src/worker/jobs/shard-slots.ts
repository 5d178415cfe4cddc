/**
 * The jobs of one queue kind that a worker process runs at once, shared by the BullMQ workers of every
 * queue shard it consumes (workers.ts): WORKER_BULK_CONCURRENCY bulk jobs in all, not per shard. Each
 * shard's worker may take as many jobs as the whole process runs, so a busy shard uses every slot while
 * the others are idle; when several shards have jobs waiting for a slot, slots go to the shards in turn
 * (round robin), so a shard with a deep backlog delays another shard's job by at most one job per other
 * shard, as fair turns do between merchants within a shard (merchant-turns.ts).
 */
export class ShardSlots {
  private running = 0;
  /** Jobs waiting for a slot, per shard, in the order they came. */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** Shards in the order they are served: the one served last goes to the back. */
  private readonly rotation: string[] = [];

  constructor(private readonly capacity: number) {}

  async run<T>(shard: string, work: () => Promise<T>): Promise<T> {
    if (this.running < this.capacity && this.waiting.size === 0) this.running++;
    else await new Promise<void>((resolve) => this.enqueue(shard, resolve));
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private enqueue(shard: string, resolve: () => void): void {
    const line = this.waiting.get(shard);
    if (line) line.push(resolve);
    else {
      this.waiting.set(shard, [resolve]);
      if (!this.rotation.includes(shard)) this.rotation.push(shard);
    }
  }

  /** A slot is free: the next shard in turn that has a job waiting gets it (the count stays). */
  private release(): void {
    for (let tried = 0; tried < this.rotation.length; tried++) {
      const shard = this.rotation.shift() as string;
      this.rotation.push(shard);
      const line = this.waiting.get(shard);
      const next = line?.shift();
      if (line?.length === 0) this.waiting.delete(shard);
      if (next) {
        next();
        return;
      }
    }
    this.running--;
  }
}
