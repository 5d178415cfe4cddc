import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { TestEnvironment } from './environment.js';
import { eventually } from './worker.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** Loaded first by every service process, as in production (tracing starts only with an OTLP endpoint set). */
export const TELEMETRY_PRELOAD = './src/shared/telemetry/telemetry.preload.ts';

export interface ServiceProcess {
  process: ChildProcess;
  port: number;
  baseUrl: string;
  /** The API's admin listener (admin API, dashboard, /metrics); the worker's health port for a worker. */
  adminUrl: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** True while the process has neither exited nor been killed by a signal. */
  alive(): boolean;
  /** Sends a signal and resolves with the exit code (or signal) once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

/**
 * Starts the real API or worker entry point as a separate process (through tsx, so no build is
 * needed), configured only through its environment as in production, and waits until /readyz says
 * it is ready. An `extraEnv` value of `undefined` removes that variable (e.g. REDIS_URL where a
 * Cluster is configured instead).
 */
export async function startService(
  kind: 'api' | 'worker',
  env: TestEnvironment,
  extraEnv: Record<string, string | undefined> = {},
): Promise<ServiceProcess> {
  const port = await freePort();
  const adminPort = kind === 'api' ? await freePort() : port;
  let output = '';
  const childEnv: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    NODE_ENV: 'test',
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    QUEUE_PREFIX: env.queuePrefix,
    SECRETS_KEYS: env.secretsKeys,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ...(kind === 'api' ? { PORT: String(port), ADMIN_PORT: String(adminPort) } : { WORKER_PORT: String(port) }),
    ...extraEnv,
  };
  for (const [name, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[name];
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', TELEMETRY_PRELOAD, `src/${kind}/index.ts`], {
    cwd: root,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = once(child, 'exit');
  const baseUrl = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`${kind} exited early:\n${output}`);
      const ready = await fetch(`${baseUrl}/readyz`).catch(() => undefined);
      return ready?.status === 200 ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, what: `${kind} to become ready` },
  );
  return {
    process: child,
    port,
    baseUrl,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    output: () => output,
    alive: () => child.exitCode === null && child.signalCode === null,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const [code, exitSignal] = (await exited) as [number | null, NodeJS.Signals | null];
      return { code, signal: exitSignal };
    },
  };
}

/**
 * Fails, with the end of the process's output (the crash), if it has exited. A process that is dying
 * may not have been reaped yet, so its exit is given a moment to show.
 */
export async function expectRunning(service: ServiceProcess, name: string): Promise<void> {
  if (service.alive()) {
    await Promise.race([
      once(service.process, 'exit').catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 300)),
    ]);
  }
  if (!service.alive()) {
    throw new Error(
      `${name} exited (${service.process.exitCode ?? service.process.signalCode}):\n${service.output().slice(-3_000)}`,
    );
  }
}
