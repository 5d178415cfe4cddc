import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import { generateKeyRingText } from '../../src/shared/secrets/key-ring-text.js';
import { RAW_BASELINE_PATHS } from '../raw-baseline/paths.js';
import { pollUntil } from './progress.js';

export type ServiceKind = 'api' | 'worker';

export interface RunningService {
  name: string;
  kind: ServiceKind | 'raw-baseline';
  pid: number;
  port: number;
  baseUrl: string;
  /** An API's admin listener (admin API, dashboard, /metrics); for the others, baseUrl. */
  adminUrl: string;
  logPath: string;
  /** SIGTERM (the services' graceful shutdown), then SIGKILL if it has not exited within 15 s. */
  stop(): Promise<void>;
}

export interface ServiceEnvironment {
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  /** Configuration given with `--env`, for every API and worker process. */
  extra: Record<string, string>;
}

/** What the raw baseline server (bench/raw-baseline/server.ts) needs besides the run's database and queue. */
export interface RawBaselineSettings {
  /** The one merchant whose signature it accepts. */
  merchant: { id: string; secretKey: string };
  /** The readAll answer it serves, as JSON text. */
  readAllBody: string;
  /** A session token and the API's /betSlip answer for it, which it stores and serves for that token. */
  betSlip: { token: string; body: string };
}

const STOP_GRACE_MS = 15_000;

/** Where bench/raw-baseline/tsconfig.json builds the bench's raw baseline server. */
const RAW_BASELINE_BUILD = 'bench/results/raw-baseline-build/server.js';

/**
 * Every child process of the run: the built API and worker entry points (`node dist/...`, configured
 * by environment variables only, as in production), the migrate and seed commands, and the bench's
 * raw baseline server. Each child's
 * output goes straight to a log file of its own, so a chatty access log costs the load generator
 * nothing. The group remembers what is running, so that cleanup (also on Ctrl-C or a crash) can stop
 * every process it started, and only those.
 */
export class ServiceGroup {
  private readonly children = new Set<ChildProcess>();
  private sequence = 0;
  /**
   * The run's key ring (SECRETS_KEYS), made afresh for every run and given to every process it starts:
   * the seed seals the merchants' secrets with it, the API and workers open them. An `--env` ring wins.
   */
  private readonly secretsKeys = generateKeyRingText('bench1');

  /**
   * `profileDir`: when set, every API and worker process runs with `node --cpu-prof` and writes its
   * CPU profile there (`<log name>.cpuprofile`) when it exits (the services exit on SIGTERM).
   */
  constructor(
    private readonly root: string,
    private readonly logDir: string,
    private readonly profileDir: string | null = null,
  ) {}

  /**
   * `checkout`: another checkout's directory whose build runs instead of this one's (its own
   * `dist/<kind>/index.js` and preload, in that directory): a candidate measured beside this build.
   */
  async start(
    kind: ServiceKind,
    name: string,
    environment: ServiceEnvironment,
    extraEnv: Record<string, string> = {},
    checkout: string = this.root,
  ): Promise<RunningService> {
    const port = await freePort();
    const adminPort = kind === 'api' ? await freePort() : port;
    const logPath = this.nextLogPath(name);
    const profileArgs = this.profileDir
      ? ['--cpu-prof', '--cpu-prof-dir', this.profileDir, '--cpu-prof-name', `${basename(logPath, '.log')}.cpuprofile`]
      : [];
    const child = this.spawnNode(
      `dist/${kind}/index.js`,
      [],
      logPath,
      {
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        // The benchmark sends far more than the default 1,000 requests a second per merchant: it measures
        // the service, not its rate limit (`--env RATE_LIMIT_PER_SECOND=…` puts one back).
        RATE_LIMIT_PER_SECOND: '0',
        ...environment.extra,
        HOST: '127.0.0.1',
        DATABASE_URL: environment.databaseUrl,
        REDIS_URL: environment.redisUrl,
        QUEUE_PREFIX: environment.queuePrefix,
        ...(kind === 'api' ? { PORT: String(port), ADMIN_PORT: String(adminPort) } : { WORKER_PORT: String(port) }),
        ...extraEnv,
      },
      // As in production: the preload starts tracing only when extraEnv sets an OTLP endpoint.
      { nodeArgs: ['--import', './dist/shared/telemetry/telemetry.preload.js', ...profileArgs], cwd: checkout },
    );
    const service = await this.whenAnswering(kind, name, child, port, logPath, async (baseUrl) => {
      const response = await fetch(`${baseUrl}/readyz`);
      await response.body?.cancel();
      return response.status === 200;
    });
    return { ...service, adminUrl: `http://127.0.0.1:${adminPort}` };
  }

  /**
   * A raw baseline server: the bench's own (`bench`, bench/raw-baseline/server.ts), the floor each API
   * route is compared with, or the independent minimal server that checks it (`independent`,
   * bench/raw-baseline/independent.mjs). Both run as the API does: plain `node` on built JavaScript
   * (`npm run bench` builds the bench's with bench/raw-baseline/tsconfig.json), `NODE_ENV=production`,
   * a process of their own. The readAll and bet slip answers they serve go to files in the log
   * directory. Ready once the bare route answers: they only listen after Postgres and Redis have.
   */
  async startRawBaseline(
    name: string,
    environment: ServiceEnvironment,
    settings: RawBaselineSettings,
    variant: 'bench' | 'independent' = 'bench',
  ): Promise<RunningService> {
    const script = variant === 'bench' ? RAW_BASELINE_BUILD : 'bench/raw-baseline/independent.mjs';
    if (!existsSync(join(this.root, script))) {
      throw new Error(`${script} is missing: run \`npm run build:bench\` (npm run bench does)`);
    }
    const port = await freePort();
    const logPath = this.nextLogPath(name);
    const readAllBodyFile = logPath.replace(/\.log$/, '.read-all.json');
    writeFileSync(readAllBodyFile, settings.readAllBody);
    const betSlipBodyFile = logPath.replace(/\.log$/, '.bet-slip.json');
    writeFileSync(betSlipBodyFile, settings.betSlip.body);
    const child = this.spawnNode(script, [], logPath, {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: environment.databaseUrl,
      REDIS_URL: environment.redisUrl,
      QUEUE_PREFIX: environment.queuePrefix,
      MERCHANT_ID: settings.merchant.id,
      MERCHANT_SECRET: settings.merchant.secretKey,
      READ_ALL_BODY_FILE: readAllBodyFile,
      BET_SLIP_TOKEN: settings.betSlip.token,
      BET_SLIP_BODY_FILE: betSlipBodyFile,
    });
    return this.whenAnswering('raw-baseline', name, child, port, logPath, async (baseUrl) => {
      const response = await fetch(`${baseUrl}${RAW_BASELINE_PATHS.bare}`, { method: 'POST' });
      await response.body?.cancel();
      return response.status === 200;
    });
  }

  /** Waits until `answers` says the child is ready (30 s at most), or stops it and throws. */
  private async whenAnswering(
    kind: RunningService['kind'],
    name: string,
    child: ChildProcess,
    port: number,
    logPath: string,
    answers: (baseUrl: string) => Promise<boolean>,
  ): Promise<RunningService> {
    const baseUrl = `http://127.0.0.1:${port}`;
    const stop = () => this.stopChild(child);
    try {
      await pollUntil(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null) {
            throw new Error(`${name} exited during start-up; its log ${logPath} ends:\n${tail(logPath)}`);
          }
          return (await answers(baseUrl).catch(() => false)) ? true : undefined;
        },
        { intervalMs: 100, timeoutMs: 30_000, what: `${name} to answer` },
      );
    } catch (error) {
      await stop();
      throw error;
    }
    return { name, kind, pid: child.pid as number, port, baseUrl, adminUrl: baseUrl, logPath, stop };
  }

  /** Runs a built script to its end; resolves with its stdout, rejects (with its log's end) on a non-zero exit. */
  async run(script: string, args: readonly string[], name: string, env: Record<string, string>): Promise<string> {
    const logPath = this.nextLogPath(name);
    const child = this.spawnNode(
      script,
      args,
      logPath,
      { NODE_ENV: 'production', LOG_LEVEL: 'warn', ...env },
      { captureStdout: true },
    );
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    if (code !== 0) {
      throw new Error(
        `${name} (${script} ${args.join(' ')}) ended with ${signal ?? code}; its log ends:\n${tail(logPath)}`,
      );
    }
    return stdout;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.children].map((child) => this.stopChild(child)));
  }

  /** Last resort, synchronous (process 'exit' handler): SIGKILL whatever is still running. */
  killAllNow(): void {
    for (const child of this.children) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }

  private spawnNode(
    script: string,
    args: readonly string[],
    logPath: string,
    env: Record<string, string>,
    options: { captureStdout?: boolean; nodeArgs?: readonly string[]; cwd?: string } = {},
  ): ChildProcess {
    const log = openSync(logPath, 'w');
    try {
      const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script, ...args], {
        cwd: options.cwd ?? this.root,
        // Only what the service needs: nothing of the developer's environment (a stray QUEUE_PREFIX,
        // say) leaks into the run.
        env: { PATH: process.env.PATH ?? '', SECRETS_KEYS: this.secretsKeys, ...env },
        stdio: ['ignore', options.captureStdout ? 'pipe' : log, log],
      });
      this.children.add(child);
      child.once('exit', () => this.children.delete(child));
      return child;
    } finally {
      closeSync(log);
    }
  }

  private async stopChild(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    try {
      await exited;
    } finally {
      clearTimeout(timer);
    }
  }

  private nextLogPath(name: string): string {
    this.sequence += 1;
    return join(this.logDir, `${String(this.sequence).padStart(2, '0')}-${name}.log`);
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no free port');
  return address.port;
}

function tail(path: string, lines = 20): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
