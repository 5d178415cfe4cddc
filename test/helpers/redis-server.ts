import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.js';
import { eventually } from './worker.js';

/**
 * Redis servers of a test's own, on free ports, so that a test can crash, stop and restart Redis
 * without touching the Redis other sessions share. Each server keeps its files in a temporary
 * directory, so a restart on the same directory replays the same append-only file.
 *
 * The `redis-server` binary is used where it is installed; else, when Docker is there, the same
 * server runs in a `redis:7` container on the host network (so ports, and Cluster addresses, are the
 * same as with the binary). With neither the test fails and says what to install.
 */

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** The server process id while it runs (the docker client's for a container), else undefined. */
  pid(): number | undefined;
  running(): boolean;
  /** kill -9: no shutdown, no final fsync, as a crash. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and directory (it replays its AOF) and waits until it answers. */
  restart(): Promise<void>;
  /** Kills it and deletes its directory. */
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  port?: number;
  /** Extra `--name value` arguments. */
  args?: string[];
}

/** The production persistence settings: every write in the AOF, fsynced once a second. */
export const durableArgs = ['--appendonly', 'yes', '--appendfsync', 'everysec', '--maxmemory-policy', 'noeviction'];

const started = new Set<RedisServer>();
let exitHookInstalled = false;

/** Starts a redis-server and waits until it answers PING. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const launcher = redisLauncher();
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), `redis-fault-${port}-`));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...(options.args ?? [])];
  let instance: LaunchedRedis | undefined;

  const start = async () => {
    instance = launcher.launch(args, dir, port);
    await waitForPong(port, () => instance?.exited() ?? true, instance.output);
  };

  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    pid: () => (instance && !instance.exited() ? instance.pid : undefined),
    running: () => instance !== undefined && !instance.exited(),
    async kill() {
      await instance?.kill();
    },
    async restart() {
      if (instance && !instance.exited()) throw new Error(`redis on ${port} is still running`);
      await start();
    },
    async stop() {
      started.delete(server);
      await instance?.kill();
      await instance?.remove();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  started.add(server);
  installExitHook();
  try {
    await start();
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

/** A last resort if a test file dies before its afterAll: no redis-server of ours outlives the run. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const server of started) {
      const pid = server.pid();
      if (pid !== undefined) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });
}

interface LaunchedRedis {
  pid: number | undefined;
  exited(): boolean;
  output(): string;
  kill(): Promise<void>;
  remove(): Promise<void>;
}

interface RedisLauncher {
  launch(args: string[], dir: string, port: number): LaunchedRedis;
}

let chosen: RedisLauncher | undefined;

function redisLauncher(): RedisLauncher {
  chosen ??= findLauncher();
  return chosen;
}

function findLauncher(): RedisLauncher {
  const binary = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((path) => existsSync(path));
  if (binary) return binaryLauncher(binary);
  if (dockerAvailable()) return dockerLauncher();
  throw new Error(
    'The fault tests start Redis servers of their own (to crash and restart them) and found neither a ' +
      'redis-server binary (/usr/bin/redis-server, e.g. `apt-get install redis-server`) nor a running Docker.',
  );
}

function binaryLauncher(binary: string): RedisLauncher {
  return {
    launch(args, dir) {
      let output = '';
      const child: ChildProcess = spawn(binary, [...args, '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      const exited = once(child, 'exit');
      const hasExited = () => child.exitCode !== null || child.signalCode !== null;
      return {
        pid: child.pid,
        exited: hasExited,
        output: () => output,
        async kill() {
          if (hasExited()) return;
          child.kill('SIGKILL');
          await exited;
        },
        async remove() {},
      };
    },
  };
}

/**
 * The same server in a container on the host network. `docker kill --signal KILL` is the crash; the
 * next launch is a new container on the same directory, so it replays the same files.
 */
function dockerLauncher(): RedisLauncher {
  let sequence = 0;
  return {
    launch(args, dir, port) {
      sequence += 1;
      const name = `rewards-fault-redis-${process.pid}-${port}-${sequence}`;
      const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
      execFileSync(
        'docker',
        [
          'run',
          '-d',
          '--rm',
          '--name',
          name,
          '--network',
          'host',
          '--user',
          String(uid),
          '-v',
          `${dir}:/data`,
          'redis:7-alpine',
          'redis-server',
          ...args,
          '--dir',
          '/data',
        ],
        { stdio: 'ignore', timeout: 120_000 },
      );
      let gone = false;
      return {
        pid: undefined,
        exited: () => gone,
        output: () => {
          try {
            return execFileSync('docker', ['logs', name], { encoding: 'utf8', timeout: 10_000 });
          } catch {
            return '';
          }
        },
        async kill() {
          if (gone) return;
          gone = true;
          try {
            execFileSync('docker', ['kill', '--signal', 'KILL', name], { stdio: 'ignore', timeout: 30_000 });
          } catch {
            // already gone
          }
        },
        async remove() {
          try {
            execFileSync('docker', ['rm', '-f', name], { stdio: 'ignore', timeout: 30_000 });
          } catch {
            // removed with --rm already
          }
        },
      };
    },
  };
}

function dockerAvailable(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** Raw RESP, so readiness does not depend on a client's reconnect logic: `+PONG`, not `-LOADING`. */
function pingOnce(port: number, timeoutMs = 1_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    const done = (value: string) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done('timeout'));
    socket.on('error', (error) => done(`error: ${error.message}`));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) done(answer.trim());
    });
  });
}

async function waitForPong(port: number, exited: () => boolean, output: () => string): Promise<void> {
  await eventually(
    async () => {
      if (exited()) throw new Error(`redis-server on ${port} exited:\n${output()}`);
      return (await pingOnce(port)) === '+PONG' ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 50, what: `redis-server on ${port} to answer PING` },
  );
}
