/**
 * Progress goes to stderr, one line per step, so that stdout carries only the result table (and can
 * be piped). Each line carries the time since the run started.
 */
export class Progress {
  private readonly started = performance.now();

  step(message: string): void {
    const seconds = ((performance.now() - this.started) / 1000).toFixed(1).padStart(6);
    process.stderr.write(`[bench ${seconds}s] ${message}\n`);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it returns a value other than undefined, or throws once `timeoutMs` has passed. */
export async function pollUntil<T>(
  probe: () => Promise<T | undefined>,
  options: { intervalMs: number; timeoutMs: number; what: string },
): Promise<T> {
  const deadline = performance.now() + options.timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline)
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what}`);
    await sleep(options.intervalMs);
  }
}
