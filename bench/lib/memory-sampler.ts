import { readFile } from 'node:fs/promises';
import { median, round } from './percentiles.js';

export interface RssSummary {
  peakMiB: number | null;
  medianMiB: number | null;
  samples: number;
}

/** Resident set size of a process from /proc/<pid>/status (VmRSS), in MiB; null off Linux or once it has exited. */
export async function readRssMiB(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Samples one process's RSS every `intervalMs` from start() to stop(). */
export class RssSampler {
  private readonly samples: number[] = [];
  private running = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly pid: number,
    private readonly intervalMs = 100,
  ) {}

  start(): this {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        const rss = await readRssMiB(this.pid);
        if (rss !== null) this.samples.push(rss);
        await new Promise((resolve) => setTimeout(resolve, this.intervalMs));
      }
    })();
    return this;
  }

  async stop(): Promise<RssSummary> {
    this.running = false;
    await this.loop;
    // One more reading, so a peak in the last interval is not missed.
    const last = await readRssMiB(this.pid);
    if (last !== null) this.samples.push(last);
    const peak = this.samples.length > 0 ? Math.max(...this.samples) : null;
    const middle = median(this.samples);
    return {
      peakMiB: peak === null ? null : round(peak),
      medianMiB: middle === null ? null : round(middle),
      samples: this.samples.length,
    };
  }
}
