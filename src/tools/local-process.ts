import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** One entry point (the API or the worker) run from source as a child of `npm start`. */
export class LocalProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;

  constructor(
    readonly name: 'api' | 'worker',
    env: Record<string, string>,
    output: NodeJS.WritableStream = process.stdout,
  ) {
    // A process group of its own: Ctrl-C reaches only `npm start`, which then asks each child once to
    // stop. Had the terminal's SIGINT reached the children too, the SIGTERM after it would count as a
    // second signal and cut their graceful shutdown short.
    this.child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', './src/shared/telemetry/telemetry.preload.ts', `src/${name}/index.ts`],
      {
        cwd: root,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const label = `${name.padEnd(6)} | `;
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (stream) createInterface({ input: stream }).on('line', (line) => output.write(`${label}${line}\n`));
    }
    this.exited = once(this.child, 'exit').then(([code]) => code as number | null);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }
}

/** One readiness request waits this long: the process answers at once when it is up. */
const PROBE_TIMEOUT_MS = 1_000;
/** The pause between two readiness requests: a start shows up within it, without a busy loop. */
const PROBE_PAUSE_MS = 200;

/** Resolves once `url` answers 200, rejects when the process exits first or the deadline passes. */
export async function waitUntilReady(process: LocalProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!process.running) throw new Error(`the ${process.name} exited before it was ready (see its lines above)`);
    const response = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }).catch(() => undefined);
    if (response?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, PROBE_PAUSE_MS));
  }
  throw new Error(`the ${process.name} was not ready at ${url} within ${timeoutMs / 1000} s`);
}
