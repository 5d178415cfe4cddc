import type { Redis } from 'ioredis';
import { median, round } from './percentiles.js';
import { sleep } from './progress.js';

const MIB = 1024 * 1024;

/** One field of `INFO memory`, in MiB. */
export async function redisMemoryMiB(
  redis: Redis,
  field: 'used_memory' | 'used_memory_peak' = 'used_memory',
): Promise<number> {
  const info = await redis.info('memory');
  const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(info);
  if (!match) throw new Error(`INFO memory has no ${field}`);
  return Number(match[1]) / MIB;
}

/**
 * The median of a few `used_memory` readings: one reading may catch a client's query buffer or a
 * reply in flight.
 */
export async function settledRedisMemoryMiB(redis: Redis, readings = 5, intervalMs = 200): Promise<number> {
  const samples: number[] = [];
  for (let reading = 0; reading < readings; reading++) {
    if (reading > 0) await sleep(intervalMs);
    samples.push(await redisMemoryMiB(redis));
  }
  return round(median(samples) ?? 0, 2);
}

/** Samples Redis `used_memory` every `intervalMs` from start() to stop(); keeps the peak. */
export class RedisMemorySampler {
  private peak = 0;
  private samples = 0;
  private running = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly intervalMs = 100,
  ) {}

  start(): this {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        await this.read();
        await sleep(this.intervalMs);
      }
    })();
    return this;
  }

  async stop(): Promise<{ peakMiB: number; samples: number }> {
    this.running = false;
    await this.loop;
    await this.read();
    return { peakMiB: round(this.peak, 2), samples: this.samples };
  }

  private async read(): Promise<void> {
    // A reading lost to a slow reply is only a gap in the samples, not a failure of the run.
    const value = await redisMemoryMiB(this.redis).catch(() => null);
    if (value === null) return;
    this.samples += 1;
    this.peak = Math.max(this.peak, value);
  }
}
